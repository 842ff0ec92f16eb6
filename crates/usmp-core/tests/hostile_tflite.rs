//! `.tflite` files made to exhaust memory: FlatBuffers lets every slot of a vector point
//! at one shared table, so a file of a megabyte can describe gigabytes of names or index
//! lists. The readers must refuse them having allocated no more than their stated budget
//! (`READ_BUDGET_FACTOR` times the file plus `READ_BUDGET_SLACK`). Peak heap use is
//! measured with a counting allocator; this file holds one test so nothing else runs
//! beside it and the peak is the reader's own.
#![allow(clippy::unwrap_used)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use usmp_core::tflite::{READ_BUDGET_FACTOR, READ_BUDGET_SLACK, read_graph, read_tflite};

struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged; the counters only
// observe the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = NOW.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: the caller's layout is passed on as given.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// A FlatBuffers writer just big enough for these files: objects are written after the
/// slot that refers to them, so every offset points forward.
struct Writer(Vec<u8>);

impl Writer {
    /// A table of `fields` 4-byte slots (`None`: absent), its vtable first; points
    /// `from`'s slots at it and returns each of its own slots' positions.
    fn table(&mut self, from: &[usize], fields: &[Option<u32>]) -> Vec<usize> {
        let vtable = self.0.len();
        self.0.extend(((4 + 2 * fields.len()) as u16).to_le_bytes());
        self.0.extend(((4 + 4 * fields.len()) as u16).to_le_bytes());
        for (k, f) in fields.iter().enumerate() {
            let off = if f.is_some() { 4 + 4 * k as u16 } else { 0 };
            self.0.extend(off.to_le_bytes());
        }
        let table = self.0.len();
        self.0.extend(((table - vtable) as i32).to_le_bytes());
        for &slot in from {
            self.point(slot, table);
        }
        fields
            .iter()
            .map(|f| {
                let at = self.0.len();
                self.0.extend(f.unwrap_or(0).to_le_bytes());
                at
            })
            .collect()
    }

    /// Points the offset slot at `slot` to `to`.
    fn point(&mut self, slot: usize, to: usize) {
        let rel = (to - slot) as u32;
        self.0[slot..slot + 4].copy_from_slice(&rel.to_le_bytes());
    }

    /// Points the offset slot at `slot` to the object written next.
    fn next(&mut self, slot: usize) {
        self.point(slot, self.0.len());
    }

    /// A vector of `n` offset slots, to be pointed at one table; returns the slots.
    fn shared(&mut self, n: usize) -> Vec<usize> {
        self.0.extend((n as u32).to_le_bytes());
        let first = self.0.len();
        self.0.extend(vec![0; 4 * n]);
        (0..n).map(|k| first + 4 * k).collect()
    }

    fn ints(&mut self, v: &[i32]) {
        self.0.extend((v.len() as u32).to_le_bytes());
        v.iter().for_each(|i| self.0.extend(i.to_le_bytes()));
    }

    fn string(&mut self, s: &[u8]) {
        self.0.extend((s.len() as u32).to_le_bytes());
        self.0.extend(s);
        self.0.extend([0, 0, 0, 0]);
    }
}

/// One subgraph of `tensors` slots sharing one int8 tensor named `name`, and `operators`
/// slots sharing one ADD that reads `inputs` and writes tensor 0.
fn shared_model(tensors: usize, name: &[u8], operators: usize, inputs: &[i32]) -> Vec<u8> {
    let mut w = Writer(vec![0; 8]);
    w.0[4..8].copy_from_slice(b"TFL3");
    let model = w.table(&[0], &[Some(3), Some(0), Some(0), None, Some(0)]);
    w.next(model[1]);
    let codes = w.shared(1);
    w.table(&codes, &[Some(0), None, None, Some(0)]);
    w.next(model[2]);
    let subgraphs = w.shared(1);
    let subgraph = w.table(&subgraphs, &[Some(0), Some(0), Some(0), Some(0)]);
    w.next(subgraph[0]);
    let slots = w.shared(tensors);
    let tensor = w.table(&slots, &[Some(0), Some(9), Some(0), Some(0)]);
    w.next(tensor[0]);
    w.ints(&[1, 4]);
    w.next(tensor[3]);
    w.string(name);
    w.next(subgraph[1]);
    w.ints(&[0]);
    w.next(subgraph[2]);
    w.ints(&[0]);
    w.next(subgraph[3]);
    let slots = w.shared(operators);
    let op = w.table(&slots, &[Some(0), Some(0), Some(0)]);
    w.next(op[1]);
    w.ints(inputs);
    w.next(op[2]);
    w.ints(&[0]);
    w.next(model[4]);
    let buffers = w.shared(1);
    w.table(&buffers, &[]);
    w.0
}

/// Heap bytes at the peak of `read`, beyond what was in use before it.
fn peak_of<T>(read: impl FnOnce() -> T) -> (T, usize) {
    let before = NOW.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let out = read();
    (out, PEAK.load(Ordering::Relaxed) - before)
}

#[test]
fn shared_tables_are_refused_within_the_read_budget() {
    // A well-formed file of this shape reads: the builder is right.
    let fine = shared_model(3, b"t", 1, &[1, 2]);
    let m = read_tflite(&fine, "fine").unwrap();
    assert_eq!((m.tensors.len(), m.calls.len()), (3, 1));
    assert_eq!(m.tensors[0].name, "t");

    // 200,000 tensor slots sharing one table with a 64 KiB name: 13 GB if each were copied.
    let names = shared_model(200_000, &vec![b'n'; 64 << 10], 1, &[0]);
    // 60,000 operators sharing one list of 60,000 inputs: 29 GB of indices.
    let lists = shared_model(1, b"t", 60_000, &vec![0; 60_000]);
    for (what, bytes) in [("names", &names), ("input lists", &lists)] {
        let budget = READ_BUDGET_FACTOR * bytes.len() + READ_BUDGET_SLACK;
        assert!(bytes.len() < 2 << 20, "{what}: {} bytes", bytes.len());
        let (model, peak) = peak_of(|| read_tflite(bytes, "hostile"));
        let e = model.unwrap_err().to_string();
        assert!(
            e.contains(&format!("more than {READ_BUDGET_FACTOR} times its size")),
            "{what}: {e}"
        );
        assert!(
            peak <= budget,
            "{what}: model reader peaked at {peak} > {budget}"
        );
        eprintln!(
            "{what}: a {}-byte file refused after {peak} bytes (budget {budget})",
            bytes.len()
        );
        let (graph, peak) = peak_of(|| read_graph(bytes).map(|g| g.tensors.len()));
        assert!(graph.is_err(), "{what}: the graph reader accepted it");
        assert!(
            peak <= budget,
            "{what}: graph reader peaked at {peak} > {budget}"
        );
    }
}
