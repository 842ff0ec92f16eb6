// Regions on a host build: the pools need no linker fragment there (the system's linker
// places every section), so no build script is needed and the code runs.
mod usmp {
    usmp_macros::usmp_pools! {
        model = "../../../../examples/models/kws.json",
        pools {
            dtcm: workspace(size = 16 KiB, region = "DTCM"),
            sram: workspace(region = "RAM"),
            flash: constant(region = "FLASH"),
        }
    }
}

fn main() {
    let mut ws = usmp::Workspace::take().unwrap();
    let _kws = usmp::kws::Model::session(&mut ws);
    assert_eq!(usmp::POOLS[0].name, "dtcm");
}
