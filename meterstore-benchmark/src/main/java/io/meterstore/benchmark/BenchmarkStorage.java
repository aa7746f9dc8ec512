package io.meterstore.benchmark;

/**
 * Where the benchmark's cold tier lives ({@code -Dbenchmark.storage}): a local directory, or a bucket of an S3 server
 * on the loopback (S3Proxy as a child process, the tests' {@code TestingS3Server}), read by both connectors and written
 * by the archiver over S3's HTTP API, so a run shows what object storage costs.
 */
public enum BenchmarkStorage
{
    LOCAL,
    S3;

    /** The dataset directory's default: an S3 dataset is kept beside the local one, never in its place. */
    String defaultDirectory()
    {
        return switch (this) {
            case LOCAL -> "var/benchmark";
            case S3 -> "var/benchmark-s3";
        };
    }
}
