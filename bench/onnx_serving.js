// onnxruntime's side of bench/onnx_serving.sh: the exported MNIST CNN on the
// inputs bench_onnx_serving wrote, timed as Kiln's side is (minimum, median
// and 90th percentile of the calls after a warmup), outputs checked against
// Kiln's.
//   node bench/onnx_serving.js DIR THREADS
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

function floats(file) {
  const b = fs.readFileSync(file);
  const copy = new Uint8Array(b.length);
  copy.set(b);
  return new Float32Array(copy.buffer);
}

async function main() {
  const [dir, threads] = [process.argv[2], Number(process.argv[3])];
  const session = await ort.InferenceSession.create(path.join(dir, 'mnist.onnx'),
      {intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all'});
  const out = {};
  for (const batch of [1, 256]) {
    const images = new ort.Tensor('float32', floats(path.join(dir, `images_b${batch}.bin`)), [batch, 28, 28, 1]);
    const [warmup, runs] = batch === 1 ? [50, 500] : [3, 30];
    let result;
    const ms = [];
    for (let i = 0; i < warmup + runs; ++i) {
      const t0 = process.hrtime.bigint();
      result = await session.run({images});
      if (i >= warmup) ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    ms.sort((a, b) => a - b);
    const want = floats(path.join(dir, `probs_b${batch}.bin`));
    const got = result.output_0.data;
    let worst = 0;
    for (let i = 0; i < want.length; ++i) worst = Math.max(worst, Math.abs(want[i] - got[i]));
    out[`b${batch}`] = {min_ms: ms[0], median_ms: ms[Math.floor(ms.length / 2)], p90_ms: ms[Math.floor(ms.length * 0.9)],
                        max_abs_diff: worst};
  }
  console.log(JSON.stringify(out));
}

main();
