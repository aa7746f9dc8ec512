package io.meterstore.parquet;

import com.google.common.collect.ImmutableList;
import io.meterstore.core.ColdFileRole;
import io.meterstore.core.ResolutionRule;
import io.meterstore.core.TableColumns;
import io.trino.spi.Page;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Table;

import java.io.IOException;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * Writes one month in the resolved layout (in each of its partitions, {@link MonthFileWriter}): the winner of every (malo_id, obis_code, "from", version_scope)
 * into {@link ColdFileRole#WINNERS} files, every version it supersedes into {@link ColdFileRole#SUPERSEDED} files,
 * both sorted by (malo_id, obis_code, "from", version) and rolled over at the table's target file size.
 * <p>
 * {@link #write} takes every version of the keys it is given, sorted, and splits them by {@link ResolutionRule}: what
 * archival streams from a hot partition, and what compaction streams from a month's live rows. The versions of a key
 * may straddle pages; the rows of the key still open are held until the next page shows its end, so each stream stays
 * sorted. {@link #writeWinners} and {@link #writeSuperseded} take rows already decided, as the cold INSERT decides them
 * against the winners already stored.
 */
public final class ResolvedMonthWriter
{
    private final MonthFileWriter winners;
    private final MonthFileWriter superseded;
    // the rows of the last key seen, which may go on in the next page: regions of earlier pages, in order
    private final List<Page> openKey = new ArrayList<>();
    // the channels of the key's columns after malo_id, obis_code and "from": none for the default key
    private final int[] keyChannels;

    public ResolvedMonthWriter(Table table, YearMonth month, String namePrefix, long targetFileSize)
    {
        requireNonNull(table, "table is null");
        requireNonNull(month, "month is null");
        requireNonNull(namePrefix, "namePrefix is null");
        this.keyChannels = TableColumns.of(table).keyChannels();
        this.winners = new MonthFileWriter(table, month, namePrefix, Optional.of(ColdFileRole.WINNERS), targetFileSize);
        this.superseded = new MonthFileWriter(table, month, namePrefix, Optional.of(ColdFileRole.SUPERSEDED), targetFileSize);
    }

    /** The files of one month: its winners files and its superseded files, either possibly empty. */
    public record ResolvedFiles(List<DataFile> winners, List<DataFile> superseded)
    {
        public ResolvedFiles
        {
            winners = ImmutableList.copyOf(winners);
            superseded = ImmutableList.copyOf(superseded);
        }

        public List<DataFile> all()
        {
            return ImmutableList.<DataFile>builder().addAll(winners).addAll(superseded).build();
        }
    }

    /** Rows of every column, every version of their keys, sorted by (malo_id, obis_code, "from", the key's other columns, version). */
    public void write(Page page)
            throws IOException
    {
        int positions = page.getPositionCount();
        if (positions == 0) {
            return;
        }
        // where each key starts in this page; the first key may continue the one held open
        int keyStart = 0;
        if (!openKey.isEmpty()) {
            Page last = openKey.getLast();
            int continued = 0;
            while (continued < positions && VersionColumns.sameMergeKey(keyChannels, last, last.getPositionCount() - 1, page, continued)) {
                continued++;
            }
            if (continued == positions) {
                openKey.add(page);
                return;
            }
            if (continued > 0) {
                openKey.add(page.getRegion(0, continued));
            }
            closeOpenKey();
            keyStart = continued;
        }
        int lastKeyStart = keyStart;
        for (int position = keyStart + 1; position < positions; position++) {
            if (!VersionColumns.sameMergeKey(keyChannels, page, position - 1, page, position)) {
                lastKeyStart = position;
            }
        }
        // every key before the last one is complete in this page
        if (lastKeyStart > keyStart) {
            Page complete = page.getRegion(keyStart, lastKeyStart - keyStart);
            emit(List.of(complete));
        }
        openKey.add(page.getRegion(lastKeyStart, positions - lastKeyStart));
    }

    /** Rows that win their key, sorted, none of whose keys has a winner in the month's other winners files. */
    public void writeWinners(Page page)
            throws IOException
    {
        winners.write(page);
    }

    /** Versions that lost to a winner, sorted. */
    public void writeSuperseded(Page page)
            throws IOException
    {
        superseded.write(page);
    }

    /** Closes both kinds of files; the month's files, none of a kind that had no rows. */
    public ResolvedFiles finish()
            throws IOException
    {
        closeOpenKey();
        return new ResolvedFiles(winners.finish(), superseded.finish());
    }

    /** Deletes every file this writer wrote: none of them was committed. */
    public void abort()
    {
        openKey.clear();
        try {
            winners.abort();
        }
        finally {
            superseded.abort();
        }
    }

    private void closeOpenKey()
            throws IOException
    {
        if (openKey.isEmpty()) {
            return;
        }
        List<Page> key = List.copyOf(openKey);
        openKey.clear();
        emit(key);
    }

    /**
     * Writes whole keys: {@code pages} hold every version of each key they touch, in sort order. A key's versions are
     * adjacent, so the winners of one key are found in one pass and each stream receives its rows in sort order.
     */
    private void emit(List<Page> pages)
            throws IOException
    {
        boolean[][] wins = new boolean[pages.size()][];
        for (int index = 0; index < pages.size(); index++) {
            wins[index] = new boolean[pages.get(index).getPositionCount()];
        }
        // the rows of the key being resolved, as (page, position); the best row per version scope is marked in wins
        KeyRows key = new KeyRows();
        for (int index = 0; index < pages.size(); index++) {
            Page page = pages.get(index);
            for (int position = 0; position < page.getPositionCount(); position++) {
                if (key.size > 0 && !VersionColumns.sameMergeKey(keyChannels, pages.get(key.pages[0]), key.positions[0], page, position)) {
                    key.markWinners(pages, wins);
                    key.size = 0;
                }
                key.add(index, position);
            }
        }
        key.markWinners(pages, wins);

        for (int index = 0; index < pages.size(); index++) {
            Page page = pages.get(index);
            int[] winning = new int[page.getPositionCount()];
            int[] losing = new int[page.getPositionCount()];
            int winningCount = 0;
            int losingCount = 0;
            for (int position = 0; position < page.getPositionCount(); position++) {
                if (wins[index][position]) {
                    winning[winningCount++] = position;
                }
                else {
                    losing[losingCount++] = position;
                }
            }
            winners.write(select(page, winning, winningCount));
            superseded.write(select(page, losing, losingCount));
        }
    }

    /** The rows of one key, as (page, position) pairs, reused from key to key. */
    private static final class KeyRows
    {
        private int[] pages = new int[4];
        private int[] positions = new int[4];
        private int size;

        void add(int page, int position)
        {
            if (size == pages.length) {
                pages = Arrays.copyOf(pages, size * 2);
                positions = Arrays.copyOf(positions, size * 2);
            }
            pages[size] = page;
            positions[size] = position;
            size++;
        }

        /** Marks the winner of each version scope among the rows of the key. */
        void markWinners(List<Page> source, boolean[][] wins)
        {
            if (size == 1) {
                wins[pages[0]][positions[0]] = true;
                return;
            }
            // indexes into this key's rows of the best version per scope so far
            int[] best = new int[size];
            int scopes = 0;
            for (int row = 0; row < size; row++) {
                Page page = source.get(pages[row]);
                boolean scopeSeen = false;
                for (int scope = 0; scope < scopes; scope++) {
                    int candidate = best[scope];
                    Page candidatePage = source.get(pages[candidate]);
                    if (VersionColumns.sameVersionScope(page, positions[row], candidatePage, positions[candidate])) {
                        scopeSeen = true;
                        if (VersionColumns.compareVersions(page, positions[row], candidatePage, positions[candidate]) > 0) {
                            best[scope] = row;
                        }
                        break;
                    }
                }
                if (!scopeSeen) {
                    // a key delivered under two version scopes has a winner in each
                    best[scopes++] = row;
                }
            }
            for (int scope = 0; scope < scopes; scope++) {
                wins[pages[best[scope]]][positions[best[scope]]] = true;
            }
        }
    }

    private static Page select(Page page, int[] positions, int count)
    {
        if (count == page.getPositionCount()) {
            return page;
        }
        if (count > 0 && positions[count - 1] - positions[0] == count - 1) {
            return page.getRegion(positions[0], count);
        }
        return page.getPositions(Arrays.copyOf(positions, count), 0, count);
    }
}
