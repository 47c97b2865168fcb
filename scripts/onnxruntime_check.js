// Runs each case that tests/onnxruntime/export_samples.cpp wrote in
// onnxruntime and compares its outputs with Kiln's: same dtype and shape,
// integers and bools equal, floats within 1e-5 relative (1e-4 for the
// MNIST CNN, whose sums run in another order), NaN where Kiln has NaN.
//   node scripts/onnxruntime_check.js DIR
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const arrays = {
  float32: Float32Array, float64: Float64Array, int32: Int32Array, int64: BigInt64Array,
  uint8: Uint8Array, bool: Uint8Array,
};

function read(dir, t) {
  const bytes = fs.readFileSync(path.join(dir, t.file));
  const Type = arrays[t.dtype];
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return new Type(copy.buffer, 0, bytes.length / Type.BYTES_PER_ELEMENT);
}

function compare(want, got, tol) {
  if (got.length !== want.length) return `${got.length} elements, expected ${want.length}`;
  for (let i = 0; i < want.length; ++i) {
    const w = Number(want[i]), g = Number(got[i]);
    if (Number.isNaN(w) ? Number.isNaN(g) : w === g) continue;
    if (tol > 0 && Math.abs(w - g) <= tol * Math.max(1, Math.abs(w))) continue;
    return `element ${i} is ${g}, Kiln's is ${w}`;
  }
  return '';
}

async function main() {
  const root = process.argv[2];
  const cases = JSON.parse(fs.readFileSync(path.join(root, 'manifest.json')));
  const failures = [], missing = [], special = [];
  const failed = new Set();
  for (const c of cases) {
    const dir = path.join(root, c.id);
    try {
      const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'));
      const feeds = {};
      for (const t of c.inputs) feeds[t.name] = new ort.Tensor(t.dtype, read(dir, t), t.dims);
      const results = await session.run(feeds);
      c.outputs.forEach((t, i) => {
        const got = results[session.outputNames[i]];
        const want = read(dir, t);
        const tol = t.dtype.startsWith('float') ? (c.op === 'MNIST CNN' ? 1e-4 : 1e-5) : 0;
        let problem = got.type !== t.dtype ? `dtype ${got.type}, Kiln's is ${t.dtype}` : '';
        if (!problem && JSON.stringify(got.dims) !== JSON.stringify(t.dims))
          problem = `shape [${got.dims}], Kiln's is [${t.dims}]`;
        if (!problem) problem = compare(want, got.data, tol);
        if (!problem) return;
        failed.add(c.id);
        // NaN's place in an order is where runtimes may differ (Kiln puts it
        // above every number, as its eager kernels do).
        (c.special_values ? special : failures).push(`${c.id} output ${i}: ${problem}`);
      });
    } catch (e) {
      const message = String(e.message || e).split('\n')[0];
      failed.add(c.id);
      // A valid model onnxruntime has no kernel for (float64 Conv, Erf...).
      (message.includes('Could not find an implementation') ? missing : failures).push(`${c.id}: ${message}`);
    }
  }
  const ops = new Set(cases.map((c) => c.op));
  console.log(`onnxruntime ${ort.env.versions.common}: ${cases.length - failed.size} of ${cases.length} cases ` +
              `(${ops.size} ops) match Kiln`);
  for (const f of failures) console.log(`  FAIL ${f}`);
  for (const f of special) console.log(`  differs on special values: ${f}`);
  for (const f of missing) console.log(`  onnxruntime has no kernel: ${f}`);
  process.exit(failures.length ? 1 : 0);
}

main();
