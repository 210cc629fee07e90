// Checks dissect's JSON Lines records against the lines of
// `dissect protocols --schema` with Ajv (JSON Schema draft 2020-12, strict
// mode, which also checks each schema against the meta-schema),
// independently of dissect's Go code. A record's schema is the line of its
// (proto, type), else ("*", type), else (proto, "*").
//
// Usage: node validate.mjs SCHEMA.jsonl RECORDS.jsonl...
// Prints one JSON object: {schemas, records, per_type: {"proto type": n},
// problem_count, problems: [at most 50 of {file, line, proto, type, error}]}.
// Used by the tests of cmd/dissect (schema_test.go).
import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';

const [schemaFile, ...recordFiles] = process.argv.slice(2);
const ajv = new Ajv2020({ strict: true, allErrors: false });
const problems = [];
let problemCount = 0;
const problem = (p) => {
  problemCount++;
  if (problems.length < 50) problems.push(p);
};

const validators = new Map();
let schemas = 0;
readFileSync(schemaFile, 'utf8').split('\n').forEach((text, i) => {
  if (text === '') return;
  const line = JSON.parse(text);
  const key = `${line.proto}\u0000${line.type}`;
  if (validators.has(key)) problem({ file: schemaFile, line: i + 1, error: `a second line for ${line.proto} ${line.type}` });
  try {
    validators.set(key, ajv.compile(line.schema));
    schemas++;
  } catch (e) {
    problem({ file: schemaFile, line: i + 1, proto: line.proto, type: line.type, error: `schema does not compile: ${e.message}` });
  }
});

let records = 0;
const perType = {};
for (const file of recordFiles) {
  readFileSync(file, 'utf8').split('\n').forEach((text, i) => {
    if (text === '') return;
    records++;
    const rec = JSON.parse(text);
    const v = validators.get(`${rec.proto}\u0000${rec.type}`) ??
      validators.get(`*\u0000${rec.type}`) ??
      validators.get(`${rec.proto}\u0000*`);
    const where = { file, line: i + 1, proto: rec.proto, type: rec.type };
    if (!v) {
      problem({ ...where, error: 'no schema line for this record' });
      return;
    }
    const k = `${rec.proto} ${rec.type}`;
    perType[k] = (perType[k] ?? 0) + 1;
    if (!v(rec)) problem({ ...where, error: ajv.errorsText(v.errors), record: text.slice(0, 500) });
  });
}
process.stdout.write(JSON.stringify({ schemas, records, per_type: perType, problem_count: problemCount, problems }) + '\n');
