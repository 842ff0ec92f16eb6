// The host runs the firmware's plan: the same usmp.toml, so the same pools, offsets,
// kernels and generated API; only the link sections land in an ordinary host executable.
fn main() {
    let planned = usmp_build::Config::from_file("../firmware/usmp.toml")
        .summary(false)
        .generate();
    if let Err(e) = planned {
        e.report_to_cargo();
    }
}
