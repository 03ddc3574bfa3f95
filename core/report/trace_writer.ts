/**
 * Streaming output for profiling: text written in chunks to a byte sink (a
 * file, optionally gzip-compressed on the way), and a binary spool of
 * fixed-size numeric records that can be read back after a run. Nothing
 * here grows with the amount written: a profile of a million steps holds
 * one chunk at a time.
 *
 * @module
 */
import zlib from "node:zlib";

/** Where bytes go: a file, a compressor in front of one, or memory. */
export interface ByteSink {
  /** Takes a chunk (the sink may not keep a reference to it after returning). */
  write(chunk: Uint8Array): void;
  /** Flushes and releases the sink; nothing may be written after. */
  close(): void;
}

/**
 * Runs a file operation; the command line passes one that turns file-system
 * errors into its own (naming the flag and the path).
 */
export type WriteGuard = <T>(op: () => T) => T;

const unguarded: WriteGuard = (op) => op();

/**
 * A file opened for writing (created or truncated) as a {@link ByteSink}.
 *
 * @param path the file
 * @param guard wraps each file operation (default: none)
 */
export function fileSink(path: string, guard: WriteGuard = unguarded): ByteSink {
  const file = guard(() => Deno.openSync(path, { write: true, create: true, truncate: true }));
  return {
    write(chunk) {
      guard(() => {
        for (let off = 0; off < chunk.length;) off += file.writeSync(chunk.subarray(off));
      });
    },
    close() {
      file.close();
    },
  };
}

/**
 * Text to bytes in chunks: {@link write} appends to a string buffer, and once
 * it holds {@link TEXT_CHUNK_CHARS} characters the buffer is encoded and
 * handed to the sink in one piece.
 *
 * @example Chunks reach the sink only when full, and at close
 * ```ts
 * import { ChunkedTextWriter } from "./trace_writer.ts";
 * import assert from "node:assert/strict";
 *
 * const chunks: Uint8Array[] = [];
 * const w = new ChunkedTextWriter({ write: (c) => void chunks.push(c.slice()), close: () => {} }, 8);
 * w.write("abc");
 * assert.equal(chunks.length, 0);
 * w.write("defghij"); // 10 characters >= 8: one chunk
 * assert.equal(chunks.length, 1);
 * w.write("k");
 * w.close();
 * assert.deepEqual(chunks.map((c) => new TextDecoder().decode(c)), ["abcdefghij", "k"]);
 * assert.equal(w.bytes, 11);
 * ```
 */
export class ChunkedTextWriter {
  readonly #sink: ByteSink;
  readonly #chunkChars: number;
  readonly #encoder = new TextEncoder();
  #buf = "";
  #bytes = 0;

  /**
   * @param sink where the encoded chunks go
   * @param chunkChars characters buffered before a chunk is written
   */
  constructor(sink: ByteSink, chunkChars: number = TEXT_CHUNK_CHARS) {
    this.#sink = sink;
    this.#chunkChars = chunkChars;
  }

  /** Bytes handed to the sink so far (before any compression the sink does). */
  get bytes(): number {
    return this.#bytes;
  }

  /** Appends text; writes a chunk when the buffer is full. */
  write(text: string): void {
    this.#buf += text;
    if (this.#buf.length >= this.#chunkChars) this.flush();
  }

  /** Writes what is buffered (if anything) as one chunk. */
  flush(): void {
    if (this.#buf.length === 0) return;
    const bytes = this.#encoder.encode(this.#buf);
    this.#buf = "";
    this.#bytes += bytes.length;
    this.#sink.write(bytes);
  }

  /** Flushes and closes the sink (the sink is closed even when the flush fails). */
  close(): void {
    try {
      this.flush();
    } finally {
      this.#sink.close();
    }
  }
}

/**
 * Characters per chunk of {@link ChunkedTextWriter}: 256 Ki. Large enough
 * that a write (and, gzipped, a deflate call with its fresh 32 KiB window)
 * costs little per byte; small enough to be nothing next to the simulator's
 * own memory. (JSON trace text is ASCII but for labels, so a chunk is about
 * 256 KiB.)
 */
export const TEXT_CHUNK_CHARS = 1 << 18;

/**
 * The gzip member header (RFC 1952 §2.3): magic 1f 8b, method 8 (deflate),
 * no flags, modification time 0 (so the same trace gives the same bytes),
 * no extra flags, OS 255 (unknown).
 */
const GZIP_HEADER = new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]);

/** A final, empty deflate block (fixed Huffman: BFINAL=1, BTYPE=01, end-of-block): ends the stream. */
const DEFLATE_END = new Uint8Array([0x03, 0x00]);

/**
 * A gzip file written chunk by chunk, synchronously: one gzip member whose
 * deflate stream is the concatenation of each chunk compressed on its own
 * and ended with a sync flush (byte-aligned, not final), then a final empty
 * block, the CRC-32 and the length. Perfetto, `gunzip` and the platform's
 * `DecompressionStream` read it as an ordinary `.gz` file. (The platform's
 * `CompressionStream` is asynchronous: chunks written from a synchronous
 * simulation would queue up in memory until it ends.)
 *
 * @example Round trip through node:zlib
 * ```ts
 * import { GzipSink } from "./trace_writer.ts";
 * import { gunzipSync } from "node:zlib";
 * import assert from "node:assert/strict";
 *
 * const parts: Uint8Array[] = [];
 * const gz = new GzipSink({ write: (c) => void parts.push(c.slice()), close: () => {} });
 * const enc = new TextEncoder();
 * gz.write(enc.encode("hello, "));
 * gz.write(enc.encode("world"));
 * gz.close();
 * const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
 * parts.reduce((off, p) => (all.set(p, off), off + p.length), 0);
 * assert.equal(new TextDecoder().decode(gunzipSync(all)), "hello, world");
 * ```
 */
export class GzipSink implements ByteSink {
  readonly #out: ByteSink;
  readonly #level: number;
  #crc = 0;
  #size = 0;
  #started = false;

  /**
   * @param out where the compressed bytes go
   * @param level zlib compression level, 1 (fastest) to 9 (smallest); the
   *   default 6 is zlib's own
   */
  constructor(out: ByteSink, level: number = zlib.constants.Z_DEFAULT_COMPRESSION) {
    this.#out = out;
    this.#level = level;
  }

  /** Compresses a chunk and writes it. */
  write(chunk: Uint8Array): void {
    this.#start();
    if (chunk.length === 0) return;
    this.#crc = zlib.crc32(chunk, this.#crc);
    // ISIZE is the input length modulo 2^32 (RFC 1952).
    this.#size = (this.#size + chunk.length) % 2 ** 32;
    this.#out.write(zlib.deflateRawSync(chunk, { level: this.#level, finishFlush: zlib.constants.Z_SYNC_FLUSH }));
  }

  /** Ends the deflate stream, writes the trailer and closes the output. */
  close(): void {
    try {
      this.#start();
      this.#out.write(DEFLATE_END);
      const trailer = new Uint8Array(8);
      const view = new DataView(trailer.buffer);
      view.setUint32(0, this.#crc >>> 0, true);
      view.setUint32(4, this.#size, true);
      this.#out.write(trailer);
    } finally {
      this.#out.close();
    }
  }

  #start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#out.write(GZIP_HEADER);
  }
}

/**
 * Records per chunk of a {@link RecordSpool}: 4,096 (with 8 numbers a
 * record, 256 KiB a chunk, the size of a text chunk).
 */
const SPOOL_CHUNK_RECORDS = 4096;

/**
 * Fixed-size records of numbers (float64) appended to a file, then read
 * back in order, a chunk at a time: what a profile keeps of a run when what
 * it writes depends on the run's outcome (a sample of requests picked once
 * every request has finished).
 *
 * @example Append, then read back in order
 * ```ts
 * import { RecordSpool } from "./trace_writer.ts";
 * import assert from "node:assert/strict";
 *
 * const path = Deno.makeTempFileSync();
 * const spool = new RecordSpool(path, 2);
 * for (let i = 0; i < 5000; i++) {
 *   const at = spool.next(); // 5,000 records: a full chunk of 4,096 and a partial one
 *   spool.buffer[at] = i;
 *   spool.buffer[at + 1] = i * 0.5;
 * }
 * const seen: number[] = [];
 * spool.read((r, at) => void seen.push(r[at] + r[at + 1]));
 * spool.remove();
 * assert.equal(seen.length, 5000);
 * assert.equal(seen[4999], 4999 * 1.5);
 * ```
 */
export class RecordSpool {
  readonly #path: string;
  readonly #width: number;
  readonly #guard: WriteGuard;
  readonly #buf: Float64Array;
  #file: Deno.FsFile | undefined;
  #filled = 0;
  #records = 0;

  /**
   * @param path the spool file (created or truncated)
   * @param width numbers per record
   * @param guard wraps each file operation (default: none)
   */
  constructor(path: string, width: number, guard: WriteGuard = unguarded) {
    this.#path = path;
    this.#width = width;
    this.#guard = guard;
    this.#buf = new Float64Array(width * SPOOL_CHUNK_RECORDS);
    this.#file = guard(() => Deno.openSync(path, { read: true, write: true, create: true, truncate: true }));
  }

  /** Records appended so far. */
  get records(): number {
    return this.#records;
  }

  /**
   * Reserves the next record and returns its offset in {@link buffer}: the
   * caller writes the record's `width` numbers there (zeros until then),
   * before the next call. (No array per record: a run appends millions.)
   */
  next(): number {
    return this.#slot();
  }

  /** The buffer {@link next}'s offsets point into. */
  get buffer(): Float64Array {
    return this.#buf;
  }

  /**
   * Calls `visit(chunk, offset)` for every record in order; the record is
   * `chunk[offset .. offset + width)`, valid only during the call.
   */
  read(visit: (chunk: Float64Array, at: number) => void): void {
    const file = this.#file!;
    this.#flush();
    const width = this.#width;
    const chunk = new Float64Array(width * SPOOL_CHUNK_RECORDS);
    const bytes = new Uint8Array(chunk.buffer);
    this.#guard(() => file.seekSync(0, Deno.SeekMode.Start));
    for (;;) {
      // Fill the chunk (a read may return less than asked), or up to the end of the file.
      let got = 0;
      while (got < bytes.length) {
        const n = this.#guard(() => file.readSync(bytes.subarray(got)));
        if (n === null || n === 0) break;
        got += n;
      }
      const count = Math.floor(got / (8 * width));
      for (let i = 0; i < count; i++) visit(chunk, i * width);
      if (got < bytes.length) return;
    }
  }

  /** Closes and deletes the spool file (safe to call twice). */
  remove(): void {
    if (!this.#file) return;
    this.#file.close();
    this.#file = undefined;
    Deno.removeSync(this.#path);
  }

  #slot(): number {
    if (this.#filled === SPOOL_CHUNK_RECORDS) this.#flush();
    const at = this.#filled * this.#width;
    this.#buf.fill(0, at, at + this.#width);
    this.#filled++;
    this.#records++;
    return at;
  }

  #flush(): void {
    if (this.#filled === 0) return;
    const file = this.#file!;
    const bytes = new Uint8Array(this.#buf.buffer, 0, this.#filled * this.#width * 8);
    this.#guard(() => {
      for (let off = 0; off < bytes.length;) off += file.writeSync(bytes.subarray(off));
    });
    this.#filled = 0;
  }
}
