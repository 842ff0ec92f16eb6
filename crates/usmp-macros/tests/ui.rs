//! Compile-fail cases, each with the compiler's message pinned in its `.stderr`, and
//! passing cases that compile and run. Bless after an intended change with
//! `TRYBUILD=overwrite cargo test -p usmp-macros --test ui`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass_*.rs");
    t.compile_fail("tests/ui/fail_*.rs");
}
