// Runs one SQL text (several statements allowed) in an in-memory DuckDB and
// prints the result of the last statement as one JSON object:
//   {"columns":[{"name":"x","type":"DOUBLE"},...],"rows":[[...],...]}
// Types are DuckDB's names (DOUBLE, BIGINT, VARCHAR, DOUBLE[], STRUCT(...)).
// Values are @duckdb/node-api's JSON forms: numbers for DOUBLE, FLOAT and
// the small integer types; strings for BIGINT, HUGEINT, UBIGINT and DECIMAL
// (exact); strings "NaN", "Infinity", "-Infinity" for non-finite floats.
// JSON has no negative zero as JavaScript prints it (-0 becomes 0): test the
// sign in SQL (signbit(x), or x::VARCHAR).
//
// Usage: node query.mjs 'SELECT 1'   or   echo 'SELECT 1' | node query.mjs
// Used by the Go package github.com/dissect-tools/dissect/internal/duckdb.
import { DuckDBInstance } from '@duckdb/node-api';

async function readStdin() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

const sql = process.argv.length > 2 ? process.argv[2] : await readStdin();
const instance = await DuckDBInstance.create(':memory:');
const conn = await instance.connect();
try {
  const reader = await conn.runAndReadAll(sql);
  const names = reader.columnNames();
  const types = reader.columnTypes();
  const out = {
    columns: names.map((name, i) => ({ name, type: types[i].toString() })),
    rows: reader.getRowsJson(),
  };
  process.stdout.write(JSON.stringify(out) + '\n');
} catch (e) {
  process.stderr.write(String(e && e.message ? e.message : e) + '\n');
  process.exitCode = 1;
} finally {
  conn.closeSync();
  instance.closeSync();
}
