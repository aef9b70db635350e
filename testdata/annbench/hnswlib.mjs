// hnswlib.mjs builds hnswlib (the reference C++ HNSW, through hnswlib-node) on a dataset that
// `go run ./cmd/annbench` wrote, and prints its recall and latency as one JSON
// object on stdout, for that program's side-by-side table.
//
//   npm ci && node hnswlib.mjs DIR NAME [efSearch,…]
//
// reads DIR/NAME.base.f32, DIR/NAME.queries.f32 and DIR/NAME.truth.u32 (the formats are in
// internal/anndata), builds a single-threaded index with the inner-product
// space at M 16, efConstruction 200 and seed 100, and for each efSearch searches every query
// for its 10 nearest, one at a time, timing each searchKnn call.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import hnswlib from 'hnswlib-node';

const [dir, name, efList = '16,32,64,128,256'] = process.argv.slice(2);
if (!dir || !name) {
  console.error('usage: node hnswlib.mjs DIR NAME [efSearch,…]');
  process.exit(2);
}

// readMatrix returns [rows, cols, data] from a file of two little-endian uint32 (rows, cols)
// and rows·cols little-endian 32-bit values.
function readMatrix(path, Type) {
  const buf = readFileSync(path);
  const rows = buf.readUInt32LE(0);
  const cols = buf.readUInt32LE(4);
  const data = new Type(buf.buffer.slice(buf.byteOffset + 8, buf.byteOffset + 8 + rows * cols * 4));
  return [rows, cols, data];
}

const [n, dim, base] = readMatrix(join(dir, `${name}.base.f32`), Float32Array);
const [nq, qdim, queries] = readMatrix(join(dir, `${name}.queries.f32`), Float32Array);
const [tq, k, truth] = readMatrix(join(dir, `${name}.truth.u32`), Uint32Array);
if (qdim !== dim || tq !== nq) throw new Error('base, queries and truth do not match');

const M = 16, efConstruction = 200;
const rssBefore = process.memoryUsage().rss;
const index = new hnswlib.HierarchicalNSW('ip', dim);
index.initIndex(n, M, efConstruction, 100);
let t0 = process.hrtime.bigint();
for (let i = 0; i < n; i++) {
  index.addPoint(Array.from(base.subarray(i * dim, (i + 1) * dim)), i);
}
const buildSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
globalThis.gc?.();
const rssAfter = process.memoryUsage().rss;

const qs = [];
for (let i = 0; i < nq; i++) qs.push(Array.from(queries.subarray(i * dim, (i + 1) * dim)));

// The layout hnswlib allocates per element (hnswalg.h): the ground-layer block (a count, 2·M
// links, the vector, the label), its level, a mutex, and on average 1/(M−1) upper-layer blocks
// of a count and M links behind a pointer; the label map entry is not counted.
const structBytes = (4 + 2 * M * 4 + 4 * dim + 8) + 4 + 40 + 8 + (4 + M * 4) / (M - 1);

const results = [];
index.setEf(16);
for (let i = 0; i < Math.min(nq, 200); i++) index.searchKnn(qs[i], k); // warm up
for (const ef of efList.split(',').map(Number)) {
  index.setEf(ef);
  const lat = new Float64Array(nq);
  let hits = 0;
  for (let i = 0; i < nq; i++) {
    t0 = process.hrtime.bigint();
    const res = index.searchKnn(qs[i], k);
    lat[i] = Number(process.hrtime.bigint() - t0) / 1e6;
    const want = new Set(truth.subarray(i * k, (i + 1) * k));
    for (const id of res.neighbors) if (want.has(id)) hits++;
  }
  lat.sort();
  results.push({
    ef,
    recall: hits / (nq * k),
    p50_ms: lat[Math.floor(nq * 0.5)],
    p99_ms: lat[Math.min(nq - 1, Math.floor(nq * 0.99))],
  });
}
console.log(JSON.stringify({
  name, n, dim, queries: nq, k, m: M, ef_construction: efConstruction,
  build_seconds: buildSeconds,
  bytes_per_vector: structBytes,
  rss_bytes_per_vector: (rssAfter - rssBefore) / n,
  results,
}));
