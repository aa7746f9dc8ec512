package io.meterstore.archiver.service;

/** What ends the process once a requested shutdown has drained the cycles and stopped the service. */
public interface ShutdownAction
{
    /** Exits the JVM; a shutdown through the HTTP interface ends the process like a signal does. */
    ShutdownAction EXIT = () -> System.exit(0);

    void onShutdown();
}
