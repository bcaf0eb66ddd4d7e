//! The standalone `piceli` binary as a user runs it: its `--help` lists only its own commands and options
//! (no app's `--target`, `--approve`, …), and it prints shell completions and a man page.

use assert_cmd::Command;

fn piceli() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_piceli"));
    cmd.timeout(std::time::Duration::from_secs(30));
    cmd
}

fn stdout(cmd: &mut Command) -> String {
    let out = cmd.assert().success();
    String::from_utf8_lossy(&out.get_output().stdout).to_string()
}

#[test]
fn help_lists_only_its_own_commands_and_options() {
    let help = stdout(piceli().arg("--help"));
    for own in ["explain", "sim", "completions", "man", "--output"] {
        assert!(help.contains(own), "`{own}` missing from:\n{help}");
    }
    for app_only in [
        "--target",
        "--approve",
        "--namespace",
        "--state-dir",
        "--timeout",
        "--kubeconfig",
    ] {
        assert!(!help.contains(app_only), "`{app_only}` in:\n{help}");
    }
}

#[test]
fn completions_and_man_page() {
    let bash = stdout(piceli().args(["completions", "bash"]));
    assert!(
        bash.contains("_piceli") && bash.contains("explain"),
        "{bash}"
    );
    let zsh = stdout(piceli().args(["completions", "zsh"]));
    assert!(zsh.contains("#compdef piceli"), "{zsh}");
    let man = stdout(piceli().arg("man"));
    assert!(
        man.starts_with(".ie") || man.contains(".TH piceli"),
        "{man}"
    );
    assert!(man.contains("explain"), "{man}");
    piceli().args(["completions", "tcsh"]).assert().code(2);
}
