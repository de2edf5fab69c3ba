// ONNX Lab, lesson 08: the digits model in the browser with ONNX Runtime Web (WebAssembly).
// Every URL is relative to the page, so the site works at http://127.0.0.1:PORT/ and behind
// jupyter-server-proxy (/user/NAME/proxy/PORT/) alike. Nothing is fetched from a CDN.
import * as ort from './ort/ort.wasm.min.mjs';

const api = { state: 'loading', error: null };
window.labkit = api;                    // what the course's Python helpers (Playwright) call
const $ = (id) => document.getElementById(id);
const t0 = performance.now();
const params = new URLSearchParams(location.search);
const config = await (await fetch('config.json')).json();
const modelName = params.get('model') in config.models ? params.get('model') : Object.keys(config.models)[0];
const { grid: GRID, cells: CELLS, inkAlpha: INK_ALPHA } = config;
const BLOCK = GRID / CELLS;

// ONNX Runtime Web reads these once, when its WebAssembly starts (the first session): change them before.
ort.env.wasm.wasmPaths = new URL('ort/', document.baseURI).href;   // the .mjs/.wasm from this server
ort.env.wasm.numThreads = Math.max(1, parseInt(params.get('threads') || '1', 10) || 1);
ort.env.wasm.proxy = false;
ort.env.logLevel = 'error';

let session;
try {
  const model = config.models[modelName];
  session = await ort.InferenceSession.create(new URL(model.url, document.baseURI).href,
                                              { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  api.loadMs = performance.now() - t0;
} catch (e) {
  api.error = String(e && e.message || e);
}

/** Run the model on n raw digits (n*64 values 0..16); returns n*10 probabilities. */
async function classify(pixels, n) {
  const model = config.models[modelName];
  const input = new ort.Tensor('uint8', Uint8Array.from(pixels), [n, 1, CELLS, CELLS]);
  const out = await session.run({ [model.input]: input });
  return out[model.output].data;
}

/** The drawing's alpha channel (h x w, 0..255) to 8x8 ink counts 0..16: labkit.android.downsample, line by line. */
function downsample(alpha, w, h) {
  let top = h, bottom = -1, left = w, right = -1;
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
    if (alpha[y * w + x] >= INK_ALPHA) {
      if (y < top) top = y; if (y > bottom) bottom = y; if (x < left) left = x; if (x > right) right = x;
    }
  }
  const counts = new Uint8Array(CELLS * CELLS);
  if (bottom < 0) return counts;
  const boxW = right - left + 1, boxH = bottom - top + 1, side = Math.max(boxW, boxH);
  const x0 = left - Math.floor((side - boxW) / 2), y0 = top - Math.floor((side - boxH) / 2);
  for (let gy = 0; gy < GRID; gy++) {
    const sy = y0 + Math.floor(((2 * gy + 1) * side) / (2 * GRID));
    if (sy < 0 || sy >= h) continue;
    for (let gx = 0; gx < GRID; gx++) {
      const sx = x0 + Math.floor(((2 * gx + 1) * side) / (2 * GRID));
      if (sx < 0 || sx >= w) continue;
      if (alpha[sy * w + sx] >= INK_ALPHA) counts[Math.floor(gy / BLOCK) * CELLS + Math.floor(gx / BLOCK)] += 1;
    }
  }
  return counts;
}

// ------------------------------------------------------------------ the drawing pad
const pad = $('pad'), ctx = pad.getContext('2d', { willReadFrequently: true });
ctx.lineWidth = pad.width / 8;
ctx.lineCap = 'round';
ctx.lineJoin = 'round';
ctx.strokeStyle = '#000';
let drawing = false;

function point(e) {
  const r = pad.getBoundingClientRect();
  return [(e.clientX - r.left) * pad.width / r.width, (e.clientY - r.top) * pad.height / r.height];
}
pad.addEventListener('pointerdown', (e) => {
  drawing = true;
  pad.setPointerCapture(e.pointerId);
  const [x, y] = point(e);
  ctx.beginPath(); ctx.moveTo(x, y); ctx.lineTo(x, y); ctx.stroke();
});
pad.addEventListener('pointermove', (e) => {
  if (!drawing) return;
  const [x, y] = point(e);
  ctx.lineTo(x, y); ctx.stroke();
});
const endStroke = () => { if (drawing) { drawing = false; predict(); } };
pad.addEventListener('pointerup', endStroke);
pad.addEventListener('pointercancel', endStroke);

function canvasAlpha() {
  const rgba = ctx.getImageData(0, 0, pad.width, pad.height).data;   // RGBA, row by row
  const alpha = new Uint8Array(pad.width * pad.height);
  for (let i = 0; i < alpha.length; i++) alpha[i] = rgba[4 * i + 3];
  return alpha;
}

async function predict() {
  const input = downsample(canvasAlpha(), pad.width, pad.height);
  const probs = await classify(input, 1);
  api.lastInput = Array.from(input);
  api.lastProbabilities = Array.from(probs);
  showPreview(input);
  showProbabilities(probs);
  api.predictions = (api.predictions || 0) + 1;
}

function showPreview(input) {
  const p = $('preview').getContext('2d'), img = p.createImageData(CELLS, CELLS);
  input.forEach((v, i) => { const g = 255 - Math.round(v * 255 / 16); img.data.set([g, g, g, 255], 4 * i); });
  p.putImageData(img, 0, 0);
}

function showProbabilities(probs) {
  let best = 0;
  probs.forEach((p, i) => { if (p > probs[best]) best = i; });
  $('digit').textContent = config.labels[best];
  $('bars').innerHTML = Array.from(probs, (p, i) =>
    `<div class="bar${i === best ? ' top' : ''}"><span>${config.labels[i]}</span>` +
    `<div style="width:${Math.round(160 * p)}px"></div>${(100 * p).toFixed(1)}%</div>`).join('');
}

$('clear').addEventListener('click', () => {
  ctx.clearRect(0, 0, pad.width, pad.height);
  $('digit').textContent = '·'; $('bars').innerHTML = ''; showPreview(new Uint8Array(64));
});

// ------------------------------------------------------------------ measurements (for Python and the button)
async function classifyAll(pixels, repeat = 1, warmup = 3) {
  const n = pixels.length, probabilities = [], latencyMs = [];
  for (let i = 0; i < warmup && n; i++) await classify(pixels[0], 1);
  for (let r = 0; r < Math.max(1, repeat); r++) {
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      const p = await classify(pixels[i], 1);
      latencyMs.push(performance.now() - t);
      if (r === 0) probabilities.push(Array.from(p));
    }
  }
  return { probabilities, latencyMs };
}

function info() {
  const base = new URL('.', document.baseURI).href;
  const downloads = performance.getEntriesByType('resource').filter((e) => e.name.startsWith(base))
    .map((e) => ({ file: e.name.slice(base.length).split('?')[0], bytes: e.encodedBodySize || e.transferSize || 0 }));
  return { numThreads: ort.env.wasm.numThreads, crossOriginIsolated: !!self.crossOriginIsolated,
           loadMs: api.loadMs ?? -1, ortVersion: config.ortVersion, model: modelName, downloads };
}

$('run-tests').addEventListener('click', async () => {
  const out = $('tests');
  try {
    const tests = await (await fetch('test_digits.json')).json();
    const { probabilities, latencyMs } = await classifyAll(tests.pixels, 3);
    const want = tests.expected[modelName];
    let diff = 0, agree = 0;
    probabilities.forEach((p, i) => {
      const argmax = (a) => a.reduce((b, v, j) => (v > a[b] ? j : b), 0);
      if (want) { p.forEach((v, j) => { diff = Math.max(diff, Math.abs(v - want[i][j])); }); agree += argmax(p) === argmax(want[i]); }
    });
    const median = latencyMs.slice().sort((a, b) => a - b)[latencyMs.length >> 1];
    out.textContent = `${probabilities.length} test digits, median ${median.toFixed(3)} ms per digit` +
      (want ? `; vs ONNX Runtime in Python: max |difference| ${diff.toExponential(1)}, ` +
              `same digit for ${agree}/${probabilities.length}` : '');
    // hand the results to the notebook that serves this page (server.reports() in Python)
    try {
      const sent = await fetch('report', { method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: modelName, probabilities, latencyMs, info: info(), userAgent: navigator.userAgent }) });
      out.textContent += sent.ok ? '\nsent to your notebook: run its "your own browser" cell' : '';
      api.reported = (api.reported || 0) + (sent.ok ? 1 : 0);
    } catch (e) { /* a static host without the course's server: nothing to send to */ }
  } catch (e) { out.textContent = `no test digits: ${e}`; }
});

// ------------------------------------------------------------------ start
// big byte arrays travel to Python as base64 (a JSON list of 313,600 numbers takes seconds)
function base64(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s);
}
Object.assign(api, { classify: async (px) => Array.from(await classify(px, 1)), classifyAll, downsample, info,
                     canvasAlpha: () => base64(canvasAlpha()),
                     canvasRGBA: () => base64(ctx.getImageData(0, 0, pad.width, pad.height).data) });
for (const name of Object.keys(config.models)) $('model').add(new Option(name, name, false, name === modelName));
$('model').addEventListener('change', (e) => { params.set('model', e.target.value); location.search = params; });
if (!api.error) {
  $('status').textContent = `ONNX Runtime Web ${config.ortVersion} · model ${modelName} ` +
    `(${(config.models[modelName].bytes / 1024).toFixed(1)} KB) · ${ort.env.wasm.numThreads} thread(s) · ` +
    `cross-origin isolated: ${!!self.crossOriginIsolated} · ready in ${api.loadMs.toFixed(0)} ms`;
} else {
  $('status').textContent = `could not start: ${api.error}`;
  $('status').classList.add('error');
}
showPreview(new Uint8Array(CELLS * CELLS));
api.state = api.error ? 'error' : 'ready';      // last: everything above is in place
