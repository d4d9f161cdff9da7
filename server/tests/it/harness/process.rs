//! The real `parley` binary as a child process (for signals: `kill -9`, SIGTERM), and a TCP
//! proxy in front of PostgreSQL that a test can cut and restore (a database outage).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parley_server::fake_openai::FakeOpenAi;
use serde_json::{Value, json};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

/// `parley serve` running as a child process on a free port.
pub struct ParleyProcess {
    child: tokio::process::Child,
    pub url: String,
    log: PathBuf,
}

/// Starts `parley serve` on `database_url`, with its data in `dir` and the extra settings `env`;
/// returns once `/healthz` answers 200.
pub async fn start_parley(database_url: &str, dir: &Path, env: &[(&str, &str)]) -> ParleyProcess {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}");
    let n = std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0);
    let log = dir.join(format!("parley-{n}.log"));
    let out = std::fs::File::create(&log).expect("log file");
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_parley"));
    command
        .arg("serve")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("PARLEY_ADDR", format!("127.0.0.1:{port}"))
        .env("DATABASE_URL", database_url)
        .env("PARLEY_DATA_DIR", dir)
        .env("PARLEY_DEMO_TOKEN_DELAY_MS", "0")
        // The fake upstreams of these tests live on this machine's loopback address.
        .env("PARLEY_PRIVATE_ENDPOINTS", "127.0.0.1")
        .env("RUST_LOG", "info,sqlx=warn")
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .kill_on_drop(true);
    for (k, v) in env {
        command.env(k, v);
    }
    let mut child = command.spawn().expect("start the parley binary");
    let client = reqwest::Client::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("parley exited at start ({status}):\n{}", std::fs::read_to_string(&log).unwrap_or_default());
        }
        if let Ok(r) = client.get(format!("{url}/healthz")).send().await
            && r.status() == 200
        {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "parley did not start:\n{}", read(&log));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    ParleyProcess { child, url, log }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

impl ParleyProcess {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.url, path)
    }

    /// What the process logged so far.
    pub fn log(&self) -> String {
        read(&self.log)
    }

    /// `kill -9`: no chance to clean up.
    pub async fn kill_9(&mut self) {
        self.child.kill().await.expect("SIGKILL");
    }

    /// Sends a signal by name (`TERM`, `INT`) with the system's `kill`.
    pub fn signal(&self, name: &str) {
        let pid = self.child.id().expect("running").to_string();
        let status = std::process::Command::new("kill").arg(format!("-{name}")).arg(&pid).status().expect("kill");
        assert!(status.success(), "kill -{name} {pid}");
    }

    /// Waits for the process to exit (at most `within`).
    pub async fn exit(&mut self, within: Duration) -> ExitStatus {
        match tokio::time::timeout(within, self.child.wait()).await {
            Ok(status) => status.expect("wait"),
            Err(_) => panic!("parley did not exit within {within:?}:\n{}", self.log()),
        }
    }

    /// A new visitor of `agent`.
    pub async fn visitor(&self, agent: &str) -> String {
        let r = reqwest::Client::new()
            .post(self.url("/api/v1/visitors"))
            .json(&json!({"agent": agent}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
        r.json::<Value>().await.unwrap()["token"].as_str().unwrap().to_owned()
    }

    /// Starts a turn; the answer's SSE response.
    pub async fn send(&self, token: &str, agent: &str, message: &str) -> reqwest::Response {
        reqwest::Client::new()
            .post(self.url("/api/v1/chat"))
            .bearer_auth(token)
            .json(&json!({"agent": agent, "message": message}))
            .send()
            .await
            .unwrap()
    }
}

/// Adds an agent on the fake upstream with the binary's own `create-agent` (which migrates the
/// database and makes the data directory's sealing key), before a server process starts.
pub async fn prepare(database_url: &str, dir: &Path, key: &str, capabilities: &[&str], fake: &FakeOpenAi) {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_parley"));
    command
        .args(["create-agent", "--key", key, "--name", key, "--provider", "openai", "--model", "fake-model"])
        .args(["--base-url", &fake.base_url(), "--allowed-origins", "*"])
        .env("PARLEY_PRIVATE_ENDPOINTS", fake.addr.to_string())
        .env("DATABASE_URL", database_url)
        .env("PARLEY_DATA_DIR", dir);
    if !capabilities.is_empty() {
        command.args(["--capabilities", &capabilities.join(",")]);
    }
    let out = command.output().await.expect("run parley create-agent");
    assert!(out.status.success(), "create-agent: {}", String::from_utf8_lossy(&out.stderr));
}

/// A TCP proxy to `upstream` that can drop every connection and refuse new ones (`cut`) until
/// `restore`.
pub struct CutProxy {
    pub addr: SocketAddr,
    cut: Arc<AtomicBool>,
    links: Arc<Mutex<Vec<JoinHandle<()>>>>,
    accept: JoinHandle<()>,
}

impl CutProxy {
    pub async fn start(upstream: SocketAddr) -> CutProxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let cut = Arc::new(AtomicBool::new(false));
        let links: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let accept = {
            let (cut, links) = (cut.clone(), links.clone());
            tokio::spawn(async move {
                loop {
                    let Ok((mut inbound, _)) = listener.accept().await else { continue };
                    if cut.load(Ordering::SeqCst) {
                        drop(inbound);
                        continue;
                    }
                    let link = tokio::spawn(async move {
                        if let Ok(mut outbound) = tokio::net::TcpStream::connect(upstream).await {
                            let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                        }
                    });
                    links.lock().await.push(link);
                }
            })
        };
        CutProxy { addr, cut, links, accept }
    }

    /// Drops every open connection; new ones are closed at once.
    pub async fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        for link in self.links.lock().await.drain(..) {
            link.abort();
        }
    }

    pub fn restore(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }

    /// `url` with its host and port replaced by the proxy at `proxy` (user and database kept).
    pub fn url_via(proxy: SocketAddr, url: &str) -> String {
        let (scheme, rest) = url.split_once("://").expect("a URL");
        let (authority, path) = rest.split_once('/').expect("a database name");
        match authority.rsplit_once('@') {
            Some((user, _)) => format!("{scheme}://{user}@{proxy}/{path}"),
            None => format!("{scheme}://{proxy}/{path}"),
        }
    }
}

impl Drop for CutProxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}
