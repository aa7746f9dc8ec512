package io.meterstore.trino.cold;

/** What a query reads from the cold tier, which decides the files and splits of each month. */
public enum ColdRead
{
    /** Every live version once ({@code <table>_versions}): every file, minus position deletes, split at row groups. */
    VERSIONS,
    /**
     * The winning versions ({@code <table>}): a resolved month's winners files alone, split at row groups and read
     * without resolution; every other month in resolution splits.
     */
    WINNERS,
    /** Every version, resolved as known at an instant ({@code <table> FOR TIMESTAMP AS OF}): every month in resolution splits. */
    RESOLVED_AS_OF,
}
