package io.meterstore.archiver.service;

import static java.util.Objects.requireNonNull;
import static java.util.Objects.requireNonNullElse;

/** The version of the running archiver: its jar's Implementation-Version, "unknown" when run from classes. */
public record ArchiverVersion(String version)
{
    public static final ArchiverVersion CURRENT = new ArchiverVersion(requireNonNullElse(ArchiverVersion.class.getPackage().getImplementationVersion(), "unknown"));

    public ArchiverVersion
    {
        requireNonNull(version, "version is null");
    }

    @Override
    public String toString()
    {
        return version;
    }
}
