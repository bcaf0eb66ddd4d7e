//! Shared test fixtures: the tiny fixture package built once per test binary, and a real registry
//! (Debian's `docker-registry`, the CNCF distribution registry) on loopback.

#![allow(dead_code)]

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use piceli_image::cargo::CargoBuild;

/// The fixture package's directory (this file is also used by the workspace's own tests).
pub fn fixture_dir() -> PathBuf {
    // The crate using this file is `image`, the workspace root, or an example under it.
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .map(|d| {
            if d.ends_with("image") {
                d.to_path_buf()
            } else {
                d.join("image")
            }
        })
        .map(|image| image.join("tests/fixture/tiny-app"))
        .find(|fixture| fixture.join("Cargo.toml").exists())
        .expect("the tiny-app fixture under image/tests/fixture")
}

/// Where fixture builds go (kept between runs, so cargo builds incrementally).
pub fn fixture_target() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("tiny-app-target")
}

/// The fixture's release binary, built with cargo once per test binary.
pub fn tiny_app() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let build = CargoBuild {
            dir: fixture_dir(),
            package: "tiny-app".into(),
            bin: None,
            target_dir: Some(fixture_target()),
        };
        build
            .run()
            .unwrap_or_else(|e| panic!("building the fixture: {e}"))
    })
}

/// A running `docker-registry serve` on 127.0.0.1 with its own storage; stopped (by PID) on drop.
pub struct LocalRegistry {
    child: Child,
    pub addr: String,
    _dir: tempfile::TempDir,
}

/// The registry binary the tests need: they fail, not skip, when it is missing.
pub const REGISTRY_BIN: &str = "/usr/bin/docker-registry";

impl LocalRegistry {
    pub fn start() -> LocalRegistry {
        LocalRegistry::start_with(None, None)
    }

    /// A registry that wants basic auth from the users of `htpasswd` (bcrypt lines).
    pub fn start_with_htpasswd(htpasswd: &str) -> LocalRegistry {
        LocalRegistry::start_with(Some(htpasswd), None)
    }

    /// A registry serving HTTPS with `cert` and `key` (PEM files).
    pub fn start_with_tls(cert: &Path, key: &Path) -> LocalRegistry {
        LocalRegistry::start_with(None, Some((cert, key)))
    }

    fn start_with(htpasswd: Option<&str>, tls: Option<(&Path, &Path)>) -> LocalRegistry {
        assert!(
            Path::new(REGISTRY_BIN).exists(),
            "{REGISTRY_BIN} is missing: these tests need a real registry (apt-get install -y docker-registry)"
        );
        let dir = tempfile::tempdir().expect("temp dir");
        let port = TcpListener::bind("127.0.0.1:0")
            .expect("free port")
            .local_addr()
            .expect("addr")
            .port();
        let addr = format!("127.0.0.1:{port}");
        let config = dir.path().join("config.yml");
        let storage = dir.path().join("storage");
        let mut text = format!(
            "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {addr}\n",
            storage.display()
        );
        if let Some(lines) = htpasswd {
            let path = dir.path().join("htpasswd");
            std::fs::write(&path, lines).expect("write htpasswd");
            text.push_str(&format!(
                "auth:\n  htpasswd:\n    realm: piceli-test\n    path: {}\n",
                path.display()
            ));
        }
        if let Some((cert, key)) = tls {
            text.push_str(&format!(
                "  tls:\n    certificate: {}\n    key: {}\n",
                cert.display(),
                key.display()
            ));
        }
        std::fs::write(&config, text).expect("write config");
        let child = Command::new(REGISTRY_BIN)
            .arg("serve")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start docker-registry");
        let registry = LocalRegistry {
            child,
            addr,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(&registry.addr).is_err() {
            assert!(
                Instant::now() < deadline,
                "docker-registry did not listen on {}",
                registry.addr
            );
            std::thread::sleep(Duration::from_millis(25));
        }
        registry
    }

    /// `127.0.0.1:PORT/NAME`.
    pub fn repo(&self, name: &str) -> piceli_image::Repository {
        piceli_image::Repository::parse(&format!("{}/{name}", self.addr)).expect("repository")
    }
}

impl Drop for LocalRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A CA and a server certificate for 127.0.0.1 it signed, made with openssl in `dir`: (CA cert, server
/// cert, server key) paths.
pub fn openssl_ca_and_server(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let run = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl is needed (the tests fail, not skip, without it)");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=piceli test CA",
    ]);
    run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=127.0.0.1",
    ]);
    std::fs::write(
        dir.join("san.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .expect("write san.ext");
    run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "san.ext",
    ]);
    (
        dir.join("ca.pem"),
        dir.join("server.pem"),
        dir.join("server.key"),
    )
}
