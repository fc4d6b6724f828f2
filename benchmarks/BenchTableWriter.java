// Commits metadata for a synthetic large Iceberg table without writing any data files.
//
// Compiled at run time by benchmarks/large_table.py with the JDK's javac against the Iceberg runtime jar and
// loaded into the running Spark JVM through a URLClassLoader (the classpath of that JVM is fixed at start).
// Building DataFile objects here instead of one py4j call per Java object is what makes 500k files take
// seconds instead of hours. Every value is a pure function of the file index, so any file can be rebuilt
// later (to delete or rewrite it) without reading the manifests back.

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.DeleteFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileMetadata;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestWriter;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.types.Conversions;

public class BenchTableWriter {
  static final long MICROS_PER_DAY = 86_400_000_000L;
  // 2024-01-01: the first day of the synthetic data.
  static final int FIRST_DAY = 19723;
  static final String[] COLUMNS = {"id", "qty", "name", "price", "d", "ts", "amount", "flag"};

  private final int filesPerPartition;
  private final int buckets;

  public BenchTableWriter(int filesPerPartition, int buckets) {
    this.filesPerPartition = filesPerPartition;
    this.buckets = buckets;
  }

  /** Partition tuple (ts_day, id_bucket) as the StructLike the builders copy from. */
  static final class Partition implements StructLike {
    private final Object[] values;

    Partition(int day, int bucket) {
      this.values = new Object[] {day, bucket};
    }

    @Override
    public int size() {
      return values.length;
    }

    @Override
    public <T> T get(int pos, Class<T> javaClass) {
      return javaClass.cast(values[pos]);
    }

    @Override
    public <T> void set(int pos, T value) {
      values[pos] = value;
    }
  }

  // Files are laid out day by day, bucket by bucket, so a manifest covers a narrow range of days, as it
  // does for a table fed by a daily append job; partition pruning on manifests then means something.
  public int dayOf(int index) {
    return FIRST_DAY + index / (filesPerPartition * buckets);
  }

  public int bucketOf(int index) {
    return (index / filesPerPartition) % buckets;
  }

  public int firstIndexOfPartition(int dayOffset, int bucket) {
    return (dayOffset * buckets + bucket) * filesPerPartition;
  }

  Partition partitionOf(int index) {
    return new Partition(dayOf(index), bucketOf(index));
  }

  public String pathOf(Table table, int index) {
    return String.format(
        "%s/data/%s/%05d-%d-bench-%08d.parquet",
        table.location(), table.spec().partitionToPath(partitionOf(index)), index % 1000, index / 1000, index);
  }

  static ByteBuffer bound(Schema schema, int fieldId, Object value) {
    return Conversions.toByteBuffer(schema.findType(fieldId), value);
  }

  /** Full metrics for all 8 columns: sizes, value/null counts, NaN count for the double, lower/upper bounds. */
  Metrics metricsOf(Schema schema, int index, long records) {
    SplittableRandom rnd = new SplittableRandom(index * 0x9E3779B97F4A7C15L + 17);
    Map<Integer, Long> sizes = new HashMap<>();
    Map<Integer, Long> values = new HashMap<>();
    Map<Integer, Long> nulls = new HashMap<>();
    Map<Integer, Long> nans = new HashMap<>();
    Map<Integer, ByteBuffer> lower = new HashMap<>();
    Map<Integer, ByteBuffer> upper = new HashMap<>();
    int[] ids = new int[COLUMNS.length];
    for (int c = 0; c < COLUMNS.length; c++) {
      ids[c] = schema.findField(COLUMNS[c]).fieldId();
      values.put(ids[c], records);
      // The key column is never null; the others have a few nulls in some files.
      nulls.put(ids[c], c == 0 ? 0L : (rnd.nextInt(4) == 0 ? (long) rnd.nextInt(100) : 0L));
      sizes.put(ids[c], records * (1 + rnd.nextInt(8)) + 64);
    }
    nans.put(ids[3], rnd.nextInt(10) == 0 ? (long) rnd.nextInt(5) : 0L);

    long firstId = (long) index * 1_000_000L;
    lower.put(ids[0], bound(schema, ids[0], firstId));
    upper.put(ids[0], bound(schema, ids[0], firstId + records - 1));
    lower.put(ids[1], bound(schema, ids[1], rnd.nextInt(10)));
    upper.put(ids[1], bound(schema, ids[1], 990 + rnd.nextInt(10)));
    lower.put(ids[2], bound(schema, ids[2], String.format("customer-%05d", rnd.nextInt(1000))));
    upper.put(ids[2], bound(schema, ids[2], String.format("customer-%05d", 99000 + rnd.nextInt(1000))));
    lower.put(ids[3], bound(schema, ids[3], rnd.nextDouble() * 10.0));
    upper.put(ids[3], bound(schema, ids[3], 990.0 + rnd.nextDouble() * 10.0));
    int day = dayOf(index);
    lower.put(ids[4], bound(schema, ids[4], day));
    upper.put(ids[4], bound(schema, ids[4], day));
    long dayStart = day * MICROS_PER_DAY;
    long start = dayStart + (long) rnd.nextInt(3_600) * 1_000_000L;
    lower.put(ids[5], bound(schema, ids[5], start));
    upper.put(ids[5], bound(schema, ids[5], start + (long) rnd.nextInt(80_000) * 1_000_000L));
    lower.put(ids[6], bound(schema, ids[6], BigDecimal.valueOf(rnd.nextInt(10_000), 2)));
    upper.put(ids[6], bound(schema, ids[6], BigDecimal.valueOf(100_000_000L + rnd.nextInt(10_000), 2)));
    lower.put(ids[7], bound(schema, ids[7], false));
    upper.put(ids[7], bound(schema, ids[7], true));
    return new Metrics(records, sizes, values, nulls, nans, lower, upper);
  }

  public DataFile dataFile(Table table, int index) {
    SplittableRandom rnd = new SplittableRandom(index);
    long records = 10_000L + rnd.nextInt(190_000);
    return DataFiles.builder(table.spec())
        .withPath(pathOf(table, index))
        .withFormat(FileFormat.PARQUET)
        .withPartition(partitionOf(index))
        .withRecordCount(records)
        .withFileSizeInBytes(records * 24 + rnd.nextInt(4096))
        .withSplitOffsets(List.of(4L))
        .withMetrics(metricsOf(table.schema(), index, records))
        .build();
  }

  ManifestFile writeManifest(Table table, int from, int to) {
    String name = "bench-" + UUID.randomUUID() + "-m0.avro";
    OutputFile out = table.io().newOutputFile(((HasTableOperations) table).operations().metadataFileLocation(name));
    // snapshotId null: format v2 lets the commit assign the snapshot id and sequence number by inheritance,
    // so FastAppend adopts these manifests as they are instead of copying them.
    ManifestWriter<DataFile> writer = ManifestFiles.write(2, table.spec(), out, null);
    try {
      for (int i = from; i < to; i++) {
        writer.add(dataFile(table, i));
      }
      writer.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return writer.toManifestFile();
  }

  /** One snapshot appending files [first, first + count) as manifests of perManifest files. Returns its id. */
  public long appendFiles(Table table, int first, int count, int perManifest, int threads) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, threads));
    try {
      List<Future<ManifestFile>> pending = new ArrayList<>();
      for (int from = first; from < first + count; from += perManifest) {
        int start = from;
        int end = Math.min(first + count, from + perManifest);
        pending.add(pool.submit(() -> writeManifest(table, start, end)));
      }
      AppendFiles append = table.newFastAppend();
      for (Future<ManifestFile> manifest : pending) {
        append.appendManifest(manifest.get());
      }
      append.set("icebook.bench", "bulk append of " + count + " files");
      append.commit();
    } finally {
      pool.shutdown();
    }
    return table.currentSnapshot().snapshotId();
  }

  /** Deletes a whole day by partition filter plus single files by path (these touch many manifests). */
  public long deleteDayAndFiles(Table table, int dayOffset, int[] indexes) {
    long start = (FIRST_DAY + dayOffset) * MICROS_PER_DAY;
    DeleteFiles delete = table.newDelete();
    delete.deleteFromRowFilter(
        Expressions.and(
            Expressions.greaterThanOrEqual("ts", start), Expressions.lessThan("ts", start + MICROS_PER_DAY)));
    for (int index : indexes) {
      delete.deleteFile(pathOf(table, index));
    }
    delete.commit();
    return table.currentSnapshot().snapshotId();
  }

  /** A merge-on-read style commit: one position delete file for each of the given data files. */
  public long addPositionDeletes(Table table, int[] indexes) {
    RowDelta delta = table.newRowDelta();
    for (int index : indexes) {
      String dataPath = pathOf(table, index);
      delta.addDeletes(
          FileMetadata.deleteFileBuilder(table.spec())
              .ofPositionDeletes()
              .withPath(dataPath.replace(".parquet", "-deletes.parquet"))
              .withFormat(FileFormat.PARQUET)
              .withPartition(partitionOf(index))
              .withRecordCount(3)
              .withFileSizeInBytes(1_500)
              .withReferencedDataFile(dataPath)
              .build());
    }
    delta.commit();
    return table.currentSnapshot().snapshotId();
  }

  /** Compaction of one partition: its files replaced by one file holding all their rows. */
  public long compactPartition(Table table, int dayOffset, int bucket, int newIndex) {
    int first = firstIndexOfPartition(dayOffset, bucket);
    long records = 0;
    long bytes = 0;
    RewriteFiles rewrite = table.newRewrite().validateFromSnapshot(table.currentSnapshot().snapshotId());
    for (int i = first; i < first + filesPerPartition; i++) {
      DataFile old = dataFile(table, i);
      records += old.recordCount();
      bytes += old.fileSizeInBytes();
      rewrite.deleteFile(old);
    }
    DataFile template = dataFile(table, first);
    rewrite.addFile(
        DataFiles.builder(table.spec())
            .copy(template)
            .withPath(pathOf(table, first).replace(".parquet", "-compacted-" + newIndex + ".parquet"))
            .withRecordCount(records)
            .withFileSizeInBytes(bytes)
            .withMetrics(metricsOf(table.schema(), first, records))
            .build());
    rewrite.commit();
    return table.currentSnapshot().snapshotId();
  }
}
