package io.meterstore.trino;

import io.trino.testing.DistributedQueryRunner;

import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

import static java.nio.charset.StandardCharsets.UTF_8;

/**
 * A Trino engine with the meterstore catalog as a process of its own, for tests that kill one mid-statement (SIGKILL):
 * the single argument is a properties file with the catalog's properties ({@link MeterstoreQueryRunner#catalogProperties}
 * of the test's warehouse, plus overrides). Prints {@code READY <host:port>} once the coordinator serves, then runs until
 * its standard input closes, so a test JVM that dies, however it dies, leaves no engine behind. Started by
 * {@link TestingEngineProcess}; a failpoint armed with {@code -Dmeterstore.failpoint=...} and
 * {@code -Dmeterstore.failpoint.block=true} prints {@code FAILPOINT <name>} and blocks the statement there.
 */
public final class MeterstoreEngineProcess
{
    private MeterstoreEngineProcess() {}

    public static void main(String[] args)
            throws Exception
    {
        Properties file = new Properties();
        try (Reader reader = Files.newBufferedReader(Path.of(args[0]), UTF_8)) {
            file.load(reader);
        }
        Map<String, String> catalogProperties = new HashMap<>();
        file.stringPropertyNames().forEach(name -> catalogProperties.put(name, file.getProperty(name)));
        DistributedQueryRunner queryRunner = MeterstoreQueryRunner.builder(catalogProperties).build();
        System.out.println("READY " + queryRunner.getCoordinator().getAddress());
        System.out.flush();
        awaitEndOfInput(System.in);
        // the test is gone or done with this engine: no orderly shutdown is needed by anyone
        Runtime.getRuntime().halt(0);
    }

    private static void awaitEndOfInput(InputStream input)
    {
        try {
            while (input.read() != -1) {
                // nothing is sent; only the end matters
            }
        }
        catch (IOException ignored) {
            // the pipe broke: the test JVM is gone
        }
    }
}
