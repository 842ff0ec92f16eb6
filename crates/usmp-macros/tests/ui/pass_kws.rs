// The kws example model planned inline into DTCM, SRAM and flash; run on the host.
mod usmp {
    usmp_macros::usmp_pools! {
        model = "../../../../examples/models/kws.json",
        algorithm = "auto",
        scratch = [op("maxpool", window = 64)],
        pools {
            dtcm:  workspace(size = 8 KiB, align = 16, section = ".usmp.dtcm", targets = ["cpu"]),
            sram:  workspace(align = 16, section = ".usmp.sram", targets = ["cpu", "npu"]),
            flash: constant(section = ".usmp.flash"),
        }
    }
}

fn main() {
    use ::usmp::Model as _;
    let mut ws = usmp::Workspace::take().unwrap();
    assert!(usmp::Workspace::take().is_none());
    assert_eq!(usmp::POOLS.len(), 3);
    assert_eq!(usmp::kws::Model::constant(&usmp::kws::BIAS)[..4], [1, 0, 255, 7]);
    let mut kws = usmp::kws::Model::session(&mut ws);
    kws.input(0).unwrap().fill(9);
    let mut call = kws.call(0).unwrap();
    assert_eq!(call.op(), ::usmp::Op::Named("conv2d"));
    assert!(call.inputs.get(0).unwrap().iter().all(|&b| b == 9));
    assert_eq!(call.scratch.get_mut(0).unwrap().len(), 1024);
    assert_eq!(kws.call(2).unwrap().scratch.get_mut(0).unwrap().len(), 64);
}
