//! The encoder's forward pass: a BERT-style transformer (post-norm, GELU, mean pooling)
//! over several token sequences packed into one batch, each attending only to itself.
//! The matrix products go through `matrixmultiply` (AVX2/FMA kernels chosen at run
//! time); everything else is plain loops.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;

use crate::ModelError;

const MAGIC: &[u8; 8] = b"TWENC1\0\0";
/// Weights per 4-bit block; a block is a little-endian f16 scale and 16 bytes of nibbles.
const BLOCK: usize = 32;
const BLOCK_BYTES: usize = 18;
const F32: u8 = 0;
const Q4: u8 = 1;

/// A tensor's place in the file.
struct Stored {
    kind: u8,
    rows: usize,
    cols: usize,
    bytes: Range<usize>,
}

struct Norm {
    weight: Vec<f32>,
    bias: Vec<f32>,
}

/// `y = x · Wᵀ + b`, W stored `[out × in]`.
struct Linear {
    weight: Vec<f32>,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

struct Layer {
    /// Query, key and value projections as one `[3H × H]` matrix.
    qkv: Linear,
    attention_out: Linear,
    attention_norm: Norm,
    expand: Linear,
    contract: Linear,
    output_norm: Norm,
}

pub struct Encoder {
    hidden: usize,
    heads: usize,
    eps: f32,
    /// The whole file; the word table is read from it row by row, 4-bit.
    file: Cow<'static, [u8]>,
    words: Range<usize>,
    word_rows: usize,
    positions: Vec<f32>,
    position_rows: usize,
    token_type: Vec<f32>,
    embedding_norm: Norm,
    layers: Vec<Layer>,
}

fn malformed(why: impl Into<String>) -> ModelError {
    ModelError::Malformed {
        file: "weights.bin",
        why: why.into(),
    }
}

/// Reads the file's fields in order, each bounds-checked.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<Range<usize>, ModelError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| malformed(format!("it ends early (at byte {})", self.at)))?;
        let range = self.at..end;
        self.at = end;
        Ok(range)
    }

    fn u32(&mut self) -> Result<u32, ModelError> {
        let r = self.take(4)?;
        let b = &self.bytes[r];
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

impl Encoder {
    pub fn parse(file: Cow<'static, [u8]>) -> Result<Encoder, ModelError> {
        let mut r = Reader {
            bytes: &file,
            at: 0,
        };
        if file.get(..8) != Some(&MAGIC[..]) {
            return Err(malformed("no TWENC1 header"));
        }
        r.take(8)?;
        let mut header = [0usize; 8];
        for field in &mut header {
            *field = r.u32()? as usize;
        }
        let [
            hidden,
            layers,
            heads,
            ffn,
            positions,
            word_rows,
            block,
            count,
        ] = header;
        let eps = f32::from_bits(r.u32()?);
        if block != BLOCK || hidden == 0 || heads == 0 || hidden % heads != 0 || hidden % BLOCK != 0
        {
            return Err(malformed("its header describes no model this engine runs"));
        }
        let mut stored = HashMap::new();
        for _ in 0..count {
            let name_len = {
                let b = r.take(2)?;
                usize::from(u16::from_le_bytes([file[b.start], file[b.start + 1]]))
            };
            let name = std::str::from_utf8(&file[r.take(name_len)?])
                .map_err(|_| malformed("a tensor name is not UTF-8"))?
                .to_owned();
            let kind = file[r.take(1)?.start];
            let (rows, cols) = (r.u32()? as usize, r.u32()? as usize);
            let size = match kind {
                F32 => rows * cols * 4,
                Q4 if cols % BLOCK == 0 => rows * cols / BLOCK * BLOCK_BYTES,
                _ => return Err(malformed(format!("{name}: unknown kind {kind}"))),
            };
            let bytes = r.take(size)?;
            stored.insert(
                name,
                Stored {
                    kind,
                    rows,
                    cols,
                    bytes,
                },
            );
        }
        if r.at != file.len() {
            return Err(malformed("bytes after the last tensor"));
        }
        let words = match stored.get("emb.word") {
            Some(s) if s.kind == Q4 && s.rows == word_rows && s.cols == hidden => s.bytes.clone(),
            _ => return Err(malformed("emb.word is missing or the wrong shape")),
        };
        let tensors = Tensors {
            file: &file,
            stored: &stored,
        };
        let norm = |prefix: &str| -> Result<Norm, ModelError> {
            Ok(Norm {
                weight: tensors.vector(&format!("{prefix}.w"), hidden)?,
                bias: tensors.vector(&format!("{prefix}.b"), hidden)?,
            })
        };
        let mut all_layers = Vec::with_capacity(layers);
        for l in 0..layers {
            let linear = |name: &str, outputs, inputs| {
                tensors.linear(&format!("l{l}.{name}"), outputs, inputs)
            };
            let (q, k, v) = (
                linear("q", hidden, hidden)?,
                linear("k", hidden, hidden)?,
                linear("v", hidden, hidden)?,
            );
            all_layers.push(Layer {
                qkv: Linear {
                    weight: [q.weight, k.weight, v.weight].concat(),
                    bias: [q.bias, k.bias, v.bias].concat(),
                    inputs: hidden,
                    outputs: 3 * hidden,
                },
                attention_out: linear("ao", hidden, hidden)?,
                attention_norm: norm(&format!("l{l}.aln"))?,
                expand: linear("fi", ffn, hidden)?,
                contract: linear("fo", hidden, ffn)?,
                output_norm: norm(&format!("l{l}.oln"))?,
            });
        }
        let position_table = tensors.matrix("emb.pos", positions, hidden)?;
        let token_type = tensors.vector("emb.type", 2 * hidden)?[..hidden].to_vec();
        let embedding_norm = norm("emb.ln")?;
        Ok(Encoder {
            hidden,
            heads,
            eps,
            words,
            word_rows,
            positions: position_table,
            position_rows: positions,
            token_type,
            embedding_norm,
            layers: all_layers,
            file,
        })
    }

    pub fn hidden(&self) -> usize {
        self.hidden
    }

    pub fn word_rows(&self) -> usize {
        self.word_rows
    }

    /// Each sequence's vector: the mean of its last hidden states, unit length. A
    /// sequence longer than the position table is cut to it; an unknown id reads as
    /// row 0.
    pub fn encode(&self, sequences: &[Vec<u32>]) -> Vec<Vec<f32>> {
        let h = self.hidden;
        let spans: Vec<Range<usize>> = {
            let mut at = 0;
            sequences
                .iter()
                .map(|s| {
                    let len = s.len().min(self.position_rows);
                    at += len;
                    at - len..at
                })
                .collect()
        };
        let tokens = spans.last().map_or(0, |s| s.end);
        let mut x = vec![0f32; tokens * h];
        for (sequence, span) in sequences.iter().zip(&spans) {
            for (position, &id) in sequence[..span.len()].iter().enumerate() {
                let row = &mut x[(span.start + position) * h..][..h];
                self.word_row(id, row);
                let place = &self.positions[position * h..][..h];
                for ((x, p), t) in row.iter_mut().zip(place).zip(&self.token_type) {
                    *x += p + t;
                }
            }
        }
        self.embedding_norm.apply(&mut x, None, h, self.eps);
        let mut scratch = Scratch::default();
        for layer in &self.layers {
            self.layer(layer, &mut x, &spans, &mut scratch);
        }
        spans
            .iter()
            .map(|span| {
                let mut mean = vec![0f32; h];
                for t in span.clone() {
                    for (m, v) in mean.iter_mut().zip(&x[t * h..][..h]) {
                        *m += v;
                    }
                }
                let norm = mean.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
                mean.iter_mut().for_each(|v| *v /= norm);
                mean
            })
            .collect()
    }

    fn layer(&self, layer: &Layer, x: &mut [f32], spans: &[Range<usize>], s: &mut Scratch) {
        let h = self.hidden;
        let tokens = x.len() / h;
        let head = h / self.heads;
        let scale = 1.0 / (head as f32).sqrt();
        layer
            .qkv
            .apply(x, tokens, resized(&mut s.qkv, tokens * 3 * h));
        resized(&mut s.context, tokens * h);
        for span in spans {
            let len = span.len();
            resized(&mut s.scores, len * len);
            for n in 0..self.heads {
                let base = span.start * 3 * h + n * head;
                // scores = Q · Kᵀ / √d, Q and K read in place from the packed projections.
                gemm(
                    (len, head, len),
                    (&s.qkv[base..], 3 * h, 1),
                    (&s.qkv[base + h..], 1, 3 * h),
                    0.0,
                    (&mut s.scores, len),
                    scale,
                );
                for row in s.scores.chunks_exact_mut(len) {
                    softmax(row);
                }
                gemm(
                    (len, len, head),
                    (&s.scores, len, 1),
                    (&s.qkv[base + 2 * h..], 3 * h, 1),
                    0.0,
                    (&mut s.context[span.start * h + n * head..], h),
                    1.0,
                );
            }
        }
        layer
            .attention_out
            .apply(&s.context, tokens, resized(&mut s.projected, tokens * h));
        layer
            .attention_norm
            .apply(x, Some(&s.projected), h, self.eps);
        let wide = resized(&mut s.wide, tokens * layer.expand.outputs);
        layer.expand.apply(x, tokens, wide);
        wide.iter_mut().for_each(|v| *v = gelu(*v));
        layer
            .contract
            .apply(&s.wide, tokens, resized(&mut s.projected, tokens * h));
        layer.output_norm.apply(x, Some(&s.projected), h, self.eps);
    }

    /// Row `id` of the word table, expanded from its 4-bit blocks.
    fn word_row(&self, id: u32, out: &mut [f32]) {
        let id = if (id as usize) < self.word_rows {
            id as usize
        } else {
            0
        };
        let row_bytes = self.hidden / BLOCK * BLOCK_BYTES;
        let start = self.words.start + id * row_bytes;
        dequantize(&self.file[start..start + row_bytes], out);
    }
}

/// Reusable buffers of one forward pass.
#[derive(Default)]
struct Scratch {
    qkv: Vec<f32>,
    context: Vec<f32>,
    projected: Vec<f32>,
    wide: Vec<f32>,
    scores: Vec<f32>,
}

fn resized(buffer: &mut Vec<f32>, len: usize) -> &mut [f32] {
    buffer.clear();
    buffer.resize(len, 0.0);
    buffer
}

/// The named tensors of a file being parsed, converted to f32 on the way out.
struct Tensors<'a> {
    file: &'a [u8],
    stored: &'a HashMap<String, Stored>,
}

impl Tensors<'_> {
    fn matrix(&self, name: &str, rows: usize, cols: usize) -> Result<Vec<f32>, ModelError> {
        let s = self
            .stored
            .get(name)
            .ok_or_else(|| malformed(format!("{name} is missing")))?;
        if s.rows * s.cols != rows * cols {
            return Err(malformed(format!("{name} is not {rows}×{cols}")));
        }
        let bytes = &self.file[s.bytes.clone()];
        let mut out = vec![0f32; rows * cols];
        match s.kind {
            F32 => {
                for (o, b) in out.iter_mut().zip(bytes.chunks_exact(4)) {
                    *o = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                }
            }
            _ => dequantize(bytes, &mut out),
        }
        Ok(out)
    }

    fn vector(&self, name: &str, len: usize) -> Result<Vec<f32>, ModelError> {
        self.matrix(name, 1, len)
    }

    fn linear(&self, name: &str, outputs: usize, inputs: usize) -> Result<Linear, ModelError> {
        Ok(Linear {
            weight: self.matrix(&format!("{name}.w"), outputs, inputs)?,
            bias: self.vector(&format!("{name}.b"), outputs)?,
            inputs,
            outputs,
        })
    }
}

/// Expands 4-bit blocks: byte j of a block holds weight j (low nibble) and weight
/// j + 16 (high nibble); a nibble q stands for (q − 8) × the block's scale.
fn dequantize(blocks: &[u8], out: &mut [f32]) {
    for (block, out) in blocks
        .chunks_exact(BLOCK_BYTES)
        .zip(out.chunks_exact_mut(BLOCK))
    {
        let scale = f16_to_f32(u16::from_le_bytes([block[0], block[1]]));
        for (j, &byte) in block[2..].iter().enumerate() {
            out[j] = (f32::from(byte & 0x0f) - 8.0) * scale;
            out[j + 16] = (f32::from(byte >> 4) - 8.0) * scale;
        }
    }
}

fn f16_to_f32(bits: u16) -> f32 {
    let sign = u32::from(bits >> 15) << 31;
    let exponent = u32::from((bits >> 10) & 0x1f);
    let mantissa = u32::from(bits & 0x3ff);
    let magnitude = match (exponent, mantissa) {
        (0, 0) => 0,
        // Subnormal: the value is mantissa × 2^-24.
        // Subnormal: mantissa × 2⁻²⁴.
        (0, m) => {
            let value = m as f32 * (-24f32).exp2();
            return if sign == 0 { value } else { -value };
        }
        (0x1f, m) => 0x7f80_0000 | (m << 13),
        (e, m) => ((e + 112) << 23) | (m << 13),
    };
    f32::from_bits(sign | magnitude)
}

impl Linear {
    fn apply(&self, x: &[f32], tokens: usize, y: &mut [f32]) {
        for row in y.chunks_exact_mut(self.outputs) {
            row.copy_from_slice(&self.bias);
        }
        if tokens <= FEW_TOKENS && self.inputs.is_multiple_of(LANES) {
            few_rows_times_weights(x, tokens, &self.weight, self.inputs, y);
            return;
        }
        gemm(
            (tokens, self.inputs, self.outputs),
            (x, self.inputs, 1),
            (&self.weight, 1, self.inputs),
            1.0,
            (y, self.outputs),
            1.0,
        );
    }
}

/// Below this many tokens (a query), a product reads each weight row once for all of
/// them instead of going through the general kernel, which repacks the whole weight
/// matrix on every call (that repacking cost a query more than its arithmetic).
const FEW_TOKENS: usize = 48;
const LANES: usize = 8;
/// Tokens whose sums run together, for two weight rows at once: twelve running sums,
/// two rows of weights and one of input fill the sixteen vector registers.
#[cfg(target_arch = "x86_64")]
const GROUP: usize = 6;
/// A query's product is split over this many threads (the caller's and one more): a
/// query is on an agent's call path, and its products are most of its time.
const QUERY_THREADS: usize = 2;

/// `y[t][n] += x[t] · w[n]` for a few rows `x`, `w` stored row-major `[out × in]`. The
/// outputs are split in halves, the second computed on a scoped thread while the
/// calling thread computes the first.
fn few_rows_times_weights(x: &[f32], tokens: usize, w: &[f32], inputs: usize, y: &mut [f32]) {
    let outputs = y.len() / tokens.max(1);
    if query_threads() < 2 || outputs < 2 * LANES {
        few_rows_times_weights_here(x, tokens, w, inputs, y);
        return;
    }
    // Even halves, so each keeps the two-rows-at-a-time kernel.
    let split = (outputs / 2) & !1;
    let (first_w, second_w) = w[..outputs * inputs].split_at(split * inputs);
    let mut first = vec![0f32; tokens * split];
    let mut second = vec![0f32; tokens * (outputs - split)];
    std::thread::scope(|scope| {
        scope.spawn(|| few_rows_times_weights_here(x, tokens, second_w, inputs, &mut second));
        few_rows_times_weights_here(x, tokens, first_w, inputs, &mut first);
    });
    for (t, row) in y.chunks_exact_mut(outputs).enumerate() {
        let (left, right) = row.split_at_mut(split);
        left.iter_mut()
            .zip(&first[t * split..][..split])
            .for_each(|(y, p)| *y += p);
        right
            .iter_mut()
            .zip(&second[t * (outputs - split)..][..outputs - split])
            .for_each(|(y, p)| *y += p);
    }
}

/// How many threads a query's products use: [`QUERY_THREADS`], or fewer on a machine
/// (or a CPU set) with fewer cores. Asked once: the answer reads the process's CPU
/// limits, too slow for every product.
fn query_threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(QUERY_THREADS))
    })
}

/// [`few_rows_times_weights`] on the calling thread.
fn few_rows_times_weights_here(x: &[f32], tokens: usize, w: &[f32], inputs: usize, y: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has the features the function is compiled for.
        unsafe { few_rows_times_weights_avx2(x, tokens, w, inputs, y) };
        return;
    }
    few_rows_times_weights_portable(x, tokens, w, inputs, y);
}

/// Two weight rows at a time (each loaded once for every token of a group), in groups
/// of up to [`GROUP`] tokens; the group's size is a constant of the inner kernel, so a
/// short last group costs only its own tokens.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn few_rows_times_weights_avx2(x: &[f32], tokens: usize, w: &[f32], inputs: usize, y: &mut [f32]) {
    let outputs = y.len() / tokens.max(1);
    assert!(
        x.len() >= tokens * inputs && w.len() >= outputs * inputs && inputs.is_multiple_of(LANES)
    );
    let mut n = 0;
    while n < outputs {
        // The last row of an odd count goes with itself (its second sum is dropped).
        let pair = [n, (n + 1).min(outputs - 1)];
        let rows = pair.map(|r| &w[r * inputs..][..inputs]);
        let mut t = 0;
        while t < tokens {
            let group = (tokens - t).min(GROUP);
            let tile = Tile {
                x,
                first_token: t,
                inputs,
                rows,
            };
            let sums = &mut [[0f32; 2]; GROUP][..group];
            match group {
                6 => tile.sums::<6>(sums),
                5 => tile.sums::<5>(sums),
                4 => tile.sums::<4>(sums),
                3 => tile.sums::<3>(sums),
                2 => tile.sums::<2>(sums),
                _ => tile.sums::<1>(sums),
            }
            for (g, pair_sums) in sums.iter().enumerate() {
                y[(t + g) * outputs + n] += pair_sums[0];
                if pair[1] != n {
                    y[(t + g) * outputs + n + 1] += pair_sums[1];
                }
            }
            t += group;
        }
        n += 2;
    }
}

/// `G` tokens from `first_token` against two weight rows.
#[cfg(target_arch = "x86_64")]
struct Tile<'a> {
    x: &'a [f32],
    first_token: usize,
    inputs: usize,
    rows: [&'a [f32]; 2],
}

#[cfg(target_arch = "x86_64")]
impl Tile<'_> {
    #[target_feature(enable = "avx2,fma")]
    fn sums<const G: usize>(&self, out: &mut [[f32; 2]]) {
        use std::arch::x86_64::{
            __m256, _mm256_fmadd_ps, _mm256_loadu_ps, _mm256_setzero_ps, _mm256_storeu_ps,
        };
        let inputs = self.inputs;
        let tokens: [&[f32]; G] =
            std::array::from_fn(|g| &self.x[(self.first_token + g) * inputs..][..inputs]);
        let [w0, w1] = self.rows;
        assert!(w0.len() >= inputs && w1.len() >= inputs && out.len() >= G);
        let mut first = [_mm256_setzero_ps(); G];
        let mut second = [_mm256_setzero_ps(); G];
        for k in (0..inputs).step_by(LANES) {
            // SAFETY: k + 8 <= inputs, the length of both rows and of every token's row.
            unsafe {
                let a = _mm256_loadu_ps(w0.as_ptr().add(k));
                let b = _mm256_loadu_ps(w1.as_ptr().add(k));
                for g in 0..G {
                    let v = _mm256_loadu_ps(tokens[g].as_ptr().add(k));
                    first[g] = _mm256_fmadd_ps(v, a, first[g]);
                    second[g] = _mm256_fmadd_ps(v, b, second[g]);
                }
            }
        }
        let sum = |v: __m256| {
            let mut lanes = [0f32; LANES];
            // SAFETY: `lanes` holds eight floats.
            unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), v) };
            lanes.iter().sum::<f32>()
        };
        for g in 0..G {
            out[g] = [sum(first[g]), sum(second[g])];
        }
    }
}

/// Four tokens at a time, each with eight running sums, so the compiler keeps them in
/// vector registers and every weight row is loaded once for the four.
#[inline(always)]
fn few_rows_times_weights_portable(
    x: &[f32],
    tokens: usize,
    w: &[f32],
    inputs: usize,
    y: &mut [f32],
) {
    let outputs = y.len() / tokens.max(1);
    for (n, row) in w.chunks_exact(inputs).enumerate() {
        let mut t = 0;
        while t < tokens {
            let group = (tokens - t).min(4);
            let mut sums = [[0f32; LANES]; 4];
            for (k, weights) in row.chunks_exact(LANES).enumerate() {
                for (g, sum) in sums.iter_mut().enumerate().take(group) {
                    let xs = &x[(t + g) * inputs + k * LANES..][..LANES];
                    for l in 0..LANES {
                        sum[l] = xs[l].mul_add(weights[l], sum[l]);
                    }
                }
            }
            for (g, sum) in sums.iter().enumerate().take(group) {
                y[(t + g) * outputs + n] += sum.iter().sum::<f32>();
            }
            t += group;
        }
    }
}

impl Norm {
    /// `x = LayerNorm(x + residual)`, row by row.
    fn apply(&self, x: &mut [f32], residual: Option<&[f32]>, h: usize, eps: f32) {
        for (t, row) in x.chunks_exact_mut(h).enumerate() {
            if let Some(r) = residual {
                for (v, add) in row.iter_mut().zip(&r[t * h..][..h]) {
                    *v += add;
                }
            }
            let mean = row.iter().sum::<f32>() / h as f32;
            let variance = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / h as f32;
            let inverse = 1.0 / (variance + eps).sqrt();
            for ((v, w), b) in row.iter_mut().zip(&self.weight).zip(&self.bias) {
                *v = (*v - mean) * inverse * w + b;
            }
        }
    }
}

fn softmax(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for v in row.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    row.iter_mut().for_each(|v| *v /= sum);
}

/// GELU with erf (as BERT): erf by Abramowitz & Stegun 7.1.26 (error below 1.5e-7).
fn gelu(x: f32) -> f32 {
    let z = x * std::f32::consts::FRAC_1_SQRT_2;
    let a = z.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = ((((1.061_405_4 * t - 1.453_152_1) * t + 1.421_413_8) * t - 0.284_496_72) * t
        + 0.254_829_6)
        * t;
    let erf = (1.0 - poly * (-a * a).exp()).copysign(z);
    0.5 * x * (1.0 + erf)
}

/// `C = alpha · A·B + beta · C` for an `m×k` A and a `k×n` B given by slices and
/// (row, column) strides, C with row stride `rsc`. The slices are checked to hold
/// every element the strides reach, so the unchecked kernel stays inside them.
fn gemm(
    (m, k, n): (usize, usize, usize),
    (a, rsa, csa): (&[f32], usize, usize),
    (b, rsb, csb): (&[f32], usize, usize),
    beta: f32,
    (c, rsc): (&mut [f32], usize),
    alpha: f32,
) {
    if m == 0 || n == 0 || k == 0 {
        return;
    }
    let reach = |rows: usize, rs: usize, cols: usize, cs: usize| (rows - 1) * rs + (cols - 1) * cs;
    assert!(reach(m, rsa, k, csa) < a.len(), "A out of bounds");
    assert!(reach(k, rsb, n, csb) < b.len(), "B out of bounds");
    assert!(reach(m, rsc, n, 1) < c.len(), "C out of bounds");
    // SAFETY: the asserts above bound every index the kernel computes from these
    // dimensions and strides; A and B are only read, C only through `c`'s borrow.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            alpha,
            a.as_ptr(),
            rsa as isize,
            csa as isize,
            b.as_ptr(),
            rsb as isize,
            csb as isize,
            beta,
            c.as_mut_ptr(),
            rsc as isize,
            1,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_floats_expand_exactly() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x0000), 0.0);
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
        assert_eq!(f16_to_f32(0x0001), (-24f32).exp2());
    }

    #[test]
    fn a_few_rows_product_equals_the_plain_sum_for_any_shape() {
        // Odd and even output counts (the two-row kernel pairs the last row with
        // itself), token counts across the group sizes, both threads' halves.
        let value = |i: usize| ((i * 7919) % 23) as f32 / 23.0 - 0.5;
        for (tokens, inputs, outputs) in [(1, 8, 3), (5, 16, 17), (7, 24, 40), (13, 32, 33)] {
            let x: Vec<f32> = (0..tokens * inputs).map(value).collect();
            let w: Vec<f32> = (0..outputs * inputs).map(|i| value(i + 5)).collect();
            let plain = |t: usize, n: usize| -> f32 {
                (0..inputs)
                    .map(|k| x[t * inputs + k] * w[n * inputs + k])
                    .sum()
            };
            // The dispatched product (threads, AVX2 where the CPU has it), and the
            // portable one the other CPUs use.
            let mut dispatched = vec![1.0; tokens * outputs];
            few_rows_times_weights(&x, tokens, &w, inputs, &mut dispatched);
            let mut portable = vec![1.0; tokens * outputs];
            few_rows_times_weights_portable(&x, tokens, &w, inputs, &mut portable);
            for (kernel, y) in [("dispatched", &dispatched), ("portable", &portable)] {
                for (i, got) in y.iter().enumerate() {
                    let (t, n) = (i / outputs, i % outputs);
                    assert!(
                        (got - 1.0 - plain(t, n)).abs() < 1e-4,
                        "{kernel} {tokens}×{inputs}→{outputs}: y[{t}][{n}] = {got}, want 1 + {}",
                        plain(t, n)
                    );
                }
            }
        }
    }

    #[test]
    fn gemm_multiplies_with_strides() {
        // A 2×3, B given as its transpose (3×2 read through strides).
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let bt = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0];
        let mut c = [0.0; 4];
        gemm((2, 3, 2), (&a, 3, 1), (&bt, 1, 3), 0.0, (&mut c, 2), 1.0);
        assert_eq!(c, [4.0, 2.0, 10.0, 5.0]);
    }
}
