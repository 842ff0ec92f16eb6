//! The last step of every int8 convolution: an output channel's accumulator plus its bias,
//! requantized by the channel's multiplier and shift, offset and clamped. Kept apart from
//! the loops so that a row of channels cuts its biases, multipliers and shifts once
//! ([`Finish::row`]) instead of checking them for every output: on a Cortex-M4 those
//! checks and the per-tensor test around them had cost as much as the requantization.

use crate::bytes::{channel, i32_at, to_output};
use crate::dsp::requantize;
use crate::fixed::rescale;
use crate::overlap::Put;
use crate::params::{Conv, Range};

/// The channels [`Finish::pairs`] sums before it finishes them: two rows of 64 bytes on
/// the stack.
pub(crate) const PAIRS: usize = 16;

/// Where [`Finish::pairs`] keeps its sums: the caller's, made once per call (not per
/// pixel pair, which would clear them every time).
pub(crate) type Rows = [[i32; PAIRS]; 2];

/// A channel's bias, multiplier and shift.
pub(crate) type Params = (i32, i32, i32);

/// `acc` rescaled to the output's zero point and clamped: `bytes::requantize` for a
/// multiplier other than `i32::MIN`, which every convolution refuses before it runs
/// (`per_channel_lists`), so the doubling multiply's one saturation needs no test.
#[inline(always)]
fn requantize(acc: i32, multiplier: i32, shift: i32, offset: i32, range: Range) -> u8 {
    to_output(rescale(acc, multiplier, shift), offset, range)
}

/// A call's requantization: what each output channel's accumulator becomes.
#[derive(Clone, Copy)]
pub(crate) struct Finish<'a> {
    /// The bias bytes (int32 per channel), if the call has a bias.
    bias: Option<&'a [u8]>,
    multipliers: &'a [i32],
    shifts: &'a [i32],
    offset: i32,
    range: Range,
    /// Whether [`bytes`](Self::bytes) may run `dsp::requantize::row`: the lists per
    /// channel, a bias, every shift to the right and no clamp but int8's (checked once).
    rows: bool,
}

impl<'a> Finish<'a> {
    /// The requantization of call `p` whose bias bytes are `bias`.
    pub(crate) fn new(p: &Conv<'a>, bias: &'a [u8]) -> Self {
        let rows = p.bias
            && p.multipliers.len() == p.shifts.len()
            && p.shifts.len() == p.output[3]
            && requantize::takes(p.shifts, p.activation);
        Finish {
            bias: p.bias.then_some(bias),
            multipliers: p.multipliers,
            shifts: p.shifts,
            offset: p.output_offset,
            range: p.activation,
            rows,
        }
    }

    /// The bias bytes, multipliers and shifts of a call whose requantization
    /// `dsp::requantize::row` runs (as [`bytes`](Self::bytes) does), else `None`.
    pub(crate) fn lists(&self) -> Option<(&'a [u8], &'a [i32], &'a [i32])> {
        let bias = self.bias.filter(|_| self.rows)?;
        Some((bias, self.multipliers, self.shifts))
    }

    /// The accumulators of channels `g..g + acc.len()`, finished into `out`: the same bytes
    /// as [`one`](Self::one) on each, in one loop (`dsp::requantize::row`) where the call
    /// allows it.
    #[inline(always)]
    pub(crate) fn bytes(&self, g: usize, acc: &[i32], out: &mut [u8]) {
        let n = acc.len();
        let lists = self.bias.and_then(|b| {
            let b = b.get(4 * g..4 * (g + n))?;
            Some((
                b,
                self.multipliers.get(g..g + n)?,
                self.shifts.get(g..g + n)?,
            ))
        });
        match lists {
            Some((b, m, s)) if self.rows && out.len() >= n => {
                requantize::row(acc, b, m, s, self.offset, out);
            }
            _ => {
                for (k, (&a, o)) in acc.iter().zip(out).enumerate() {
                    *o = self.one(g + k, a);
                }
            }
        }
    }

    /// Output channel `oc`'s accumulator, finished.
    #[inline(always)]
    pub(crate) fn one(&self, oc: usize, acc: i32) -> u8 {
        let acc = match self.bias {
            Some(bias) => acc.wrapping_add(i32_at(bias, oc)),
            None => acc,
        };
        let (m, s) = (channel(self.multipliers, oc), channel(self.shifts, oc));
        requantize(acc, m, s, self.offset, self.range)
    }

    /// The bias, multiplier and shift of channels `g..g + n`, `N` channels at a time,
    /// each list cut once, so a loop walking them beside its outputs checks nothing per
    /// channel. `None` where the lists are per tensor or the call has no bias (then
    /// [`one`](Self::one) per output): every convolution TFLite writes has both.
    #[inline(always)]
    pub(crate) fn blocks<const N: usize>(
        &self,
        g: usize,
        n: usize,
    ) -> Option<impl Iterator<Item = [Params; N]> + 'a> {
        let m = self.multipliers.get(g..g + n)?;
        let s = self.shifts.get(g..g + n)?;
        let b = self.bias?.get(4 * g..4 * (g + n))?;
        let each = m
            .chunks_exact(N)
            .zip(s.chunks_exact(N))
            .zip(b.chunks_exact(4 * N));
        Some(each.map(|((m, s), b)| {
            let mut block = [(0, 0, 0); N];
            for (k, p) in block.iter_mut().enumerate() {
                let bias = [b[4 * k], b[4 * k + 1], b[4 * k + 2], b[4 * k + 3]];
                *p = (i32::from_le_bytes(bias), m[k], s[k]);
            }
            block
        }))
    }

    /// [`bytes`](Self::bytes) into `bytes` (as long as `acc`), then stored by `put` at
    /// output elements `at..` (channel `g + k` at `at + k`).
    #[inline(always)]
    pub(crate) fn put_row(
        &self,
        g: usize,
        acc: &[i32],
        bytes: &mut [u8],
        (put, at): (&mut (impl Put + ?Sized), usize),
    ) {
        self.bytes(g, acc, bytes);
        put.row(at, bytes);
    }

    /// The outputs of two pixels `a` and `b` by blocks of channels, from channel 0: `block(oc,
    /// len, rows)` sums channels `oc..oc + len` (`len` even, at most [`PAIRS`]) of both
    /// pixels into `rows` (`a`'s, then `b`'s) and returns how many it summed (even); they
    /// are finished as two rows ([`bytes`](Self::bytes)), until a block sums fewer than
    /// asked or the outputs' even channels are done. Returns the channels done.
    #[inline(always)]
    pub(crate) fn by_blocks(
        &self,
        rows: &mut Rows,
        [oa, ob]: [&mut [u8]; 2],
        mut block: impl FnMut(usize, usize, &mut Rows) -> usize,
    ) -> usize {
        let channels = oa.len().min(ob.len()) & !1;
        let mut oc = 0;
        while oc < channels {
            let len = PAIRS.min(channels - oc);
            let k = block(oc, len, rows).min(len);
            let [sa, sb] = &*rows;
            self.bytes(oc, &sa[..k], &mut oa[oc..oc + k]);
            self.bytes(oc, &sb[..k], &mut ob[oc..oc + k]);
            oc += k;
            if k < len {
                break;
            }
        }
        oc
    }

    /// [`by_blocks`](Self::by_blocks) summed a channel pair at a time: `sums` gives each pair's
    /// four sums in turn (`a` by each channel, then `b`), or `None` when there are no more.
    #[inline(always)]
    pub(crate) fn pairs(
        &self,
        rows: &mut Rows,
        outs: [&mut [u8]; 2],
        mut sums: impl FnMut() -> Option<[i32; 4]>,
    ) -> usize {
        self.by_blocks(rows, outs, |_, len, [sa, sb]| {
            let mut k = 0;
            for (a, b) in sa[..len]
                .chunks_exact_mut(2)
                .zip(sb[..len].chunks_exact_mut(2))
            {
                let Some([au, av, bu, bv]) = sums() else {
                    break;
                };
                (a[0], a[1], b[0], b[1]) = (au, av, bu, bv);
                k += 2;
            }
            k
        })
    }

    /// An accumulator finished with its channel's [`Params`].
    #[inline(always)]
    pub(crate) fn with(&self, acc: i32, (bias, m, s): Params) -> u8 {
        requantize(acc.wrapping_add(bias), m, s, self.offset, self.range)
    }

    /// The accumulators of channels `g..g + acc.len()`, finished, output `k` of them
    /// stored by `put`: the same bytes as [`one`](Self::one) on each, the lists walked
    /// beside them ([`blocks`](Self::blocks)) where they can be.
    #[inline(always)]
    pub(crate) fn row(&self, g: usize, acc: &[i32], put: &mut impl FnMut(usize, u8)) {
        match self.blocks::<1>(g, acc.len()) {
            Some(params) => {
                for (k, (&a, [p])) in acc.iter().zip(params).enumerate() {
                    put(k, self.with(a, p));
                }
            }
            None => {
                for (k, &a) in acc.iter().enumerate() {
                    put(k, self.one(g + k, a));
                }
            }
        }
    }
}
