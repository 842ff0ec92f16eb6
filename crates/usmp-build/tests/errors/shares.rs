//! A constant pool sharing a workspace pool's size (`shares`): the mistakes, each at its
//! token, and the split planned (both pools within the size together, the split kept the
//! quickest of those planned under `fastest`, "workspace first" otherwise).

use super::*;

/// Pools `dtcm` (workspace, 64 KiB), `sram`, `tcm_w` (constant, `extra` added) and
/// `flash`, with bandwidths; the kws model with `assignment`.
fn toml(dtcm: &str, tcm_w: &str, assignment: &str) -> String {
    format!(
        "[[pool]]\nname = \"dtcm\"\n{dtcm}bandwidth = \"8 GB/s\"\n\n[[pool]]\nname = \"sram\"\nbandwidth = \"2 GB/s\"\n\n[[pool]]\nname = \"tcm_w\"\nkind = \"constant\"\n{tcm_w}bandwidth = \"8 GB/s\"\n\n[[pool]]\nname = \"flash\"\nkind = \"constant\"\nbandwidth = \"0.2 GB/s\"\n{MODEL}assignment = \"{assignment}\"\n"
    )
}

#[test]
fn a_shared_size_is_a_workspace_pools_in_the_same_region() {
    let sized = "size = 4096\n";
    for (case, dtcm, tcm_w, at, words) in [
        (
            "shares_undeclared",
            sized,
            "shares = \"dtmc\"\n",
            "13:10",
            &["`shares` names pool `dtmc`, which is not declared"][..],
        ),
        (
            "shares_constant",
            sized,
            "shares = \"flash\"\n",
            "13:10",
            &["`shares` names constant pool `flash`"],
        ),
        (
            "shares_without_size",
            "",
            "shares = \"dtcm\"\n",
            "12:10",
            &[
                "`shares` names workspace pool `dtcm`, which has no `size` to share",
                "give pool `dtcm` a size",
            ],
        ),
        (
            "shares_across_regions",
            "size = 4096\nregion = \"DTCM\"\n",
            "shares = \"dtcm\"\nregion = \"ITCM\"\n",
            "14:10",
            &["shares the size of pool `dtcm`, but the two are not in the same region"],
        ),
    ] {
        one(case, &toml(dtcm, tcm_w, "fastest"), at, words);
    }
    one(
        "shares_on_workspace",
        &toml("size = 4096\nshares = \"sram\"\n", "", "fastest"),
        "4:10",
        &["workspace pool `dtcm` shares another pool's size, but only a constant pool can"],
    );
}

/// A split as the report lists it: the two limits and, where it planned, its estimated
/// time in nanoseconds.
type Split = (u64, u64, Option<u64>);

/// The report's pool lines (name -> bytes), the splits planned and the kept one's index.
fn report(dir: &std::path::Path) -> (Vec<(String, u64)>, Vec<Split>, usize) {
    let text = std::fs::read_to_string(dir.join("out/usmp-report.txt")).unwrap();
    let pools = text
        .lines()
        .skip_while(|l| !l.starts_with("pools"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w[0].to_string(), w[2].parse().unwrap())
        })
        .collect();
    let mut splits = Vec::new();
    let mut kept = usize::MAX;
    for l in text
        .lines()
        .skip_while(|l| !l.contains("splits planned"))
        .skip(1)
    {
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.len() < 4 || w[1] != "+" {
            break;
        }
        let ns = (w[3] != "no").then(|| {
            let us = w[w.iter().position(|x| *x == "us").unwrap() - 1];
            let (whole, frac) = us.split_once('.').unwrap();
            whole.parse::<u64>().unwrap() * 1000 + frac.parse::<u64>().unwrap()
        });
        if l.ends_with("(kept)") {
            kept = splits.len();
        }
        splits.push((w[0].parse().unwrap(), w[2].parse().unwrap(), ns));
    }
    (pools, splits, kept)
}

#[test]
fn the_split_kept_is_the_quickest_planned_and_both_pools_fit_the_size() {
    let size = 4096;
    let fastest = setup(
        "shares_fastest",
        &toml(
            &format!("size = {size}\n"),
            "shares = \"dtcm\"\n",
            "fastest",
        ),
        &[],
    );
    generates(&fastest);
    let (pools, splits, kept) = report(&fastest);
    let used = |name: &str| pools.iter().find(|(n, _)| n == name).unwrap().1;
    assert!(used("dtcm") + used("tcm_w") <= size, "{pools:?}");
    assert!(used("tcm_w") > 0, "weights were given room: {pools:?}");
    // Nine splits, from what the activations used alone down to none of it.
    assert_eq!(splits.len(), 9, "{splits:?}");
    assert_eq!(splits[8].0, 0);
    for &(w, c, _) in &splits {
        assert_eq!(w + c, size, "{splits:?}");
    }
    let best = splits[kept].2.unwrap();
    assert!(
        splits.iter().all(|s| s.2.is_none_or(|t| t >= best)),
        "{splits:?}"
    );

    // The preference order: workspace first, one split.
    let preference = setup(
        "shares_preference",
        &toml(
            &format!("size = {size}\n"),
            "shares = \"dtcm\"\n",
            "preference",
        ),
        &[],
    );
    generates(&preference);
    let (pools, splits, kept) = report(&preference);
    assert_eq!((splits.len(), kept), (1, 0), "{splits:?}");
    let used = |name: &str| pools.iter().find(|(n, _)| n == name).unwrap().1;
    assert_eq!(
        splits[0].0,
        used("dtcm"),
        "the activations kept what they use"
    );
    assert!(used("dtcm") + used("tcm_w") <= size, "{pools:?}");
}

#[test]
fn a_shared_size_too_small_for_both_says_so_at_shares() {
    // kws's weights (1,136 bytes) have no pool but tcm_w, which 512 bytes cannot hold.
    let toml = format!(
        "[[pool]]\nname = \"dtcm\"\nsize = 512\n\n[[pool]]\nname = \"sram\"\n\n[[pool]]\nname = \"tcm_w\"\nkind = \"constant\"\nshares = \"dtcm\"\n{MODEL}"
    );
    one(
        "shares_too_small",
        &toml,
        "11:10",
        &[
            "pools `dtcm` and `tcm_w` found no plan within the 512 bytes of `dtcm` together",
            "pool `tcm_w` (512 bytes) is too small",
            "give pool `dtcm` a larger `size`",
        ],
    );
}
