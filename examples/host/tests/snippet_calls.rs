//! docs/build.md's loop over a model's calls, compiled and run word for word (its own
//! test binary: the workspace is taken once per process). `snippets.rs` checks that the
//! block stands here.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod usmp {
    include!(concat!(env!("OUT_DIR"), "/usmp.rs"));
}

#[test]
fn the_call_by_call_loop_runs() -> Result<(), usmp_kernels::Error> {
    let features = micro_speech::testdata::input(2);
    // From docs/build.md, as written there:
    let mut workspace = usmp::Workspace::take().unwrap(); // the one handle; None after
    let mut model = usmp::micro_speech::Model::session(&mut workspace);
    model.input(0).unwrap().copy_from_slice(features);
    for i in 0..model.calls() {
        let mut call = model.call(i).unwrap();
        usmp_kernels::run(&usmp::micro_speech::KERNELS[i], &mut call)?;
    }
    let scores = model.output(0).unwrap();
    // (end of the snippet)
    assert_eq!(scores, micro_speech::testdata::expected(2));
    Ok(())
}
