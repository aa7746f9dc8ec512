package io.meterstore.archiver.service;

/** The service's state, as {@code GET /v1/info/state} reports it and {@code PUT /v1/info/state} changes it. */
public enum ArchiverState
{
    /** Cycles run on schedule. */
    ACTIVE,
    /** No new cycle starts; the process exits once the cycles in flight have finished their step. */
    SHUTTING_DOWN,
}
