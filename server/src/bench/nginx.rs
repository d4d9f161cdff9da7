//! A real nginx as a child process, for the benchmarks and the tests (the crawler's test site, the
//! replicas' load balancer): started in its own process group with a configuration in a folder of
//! its own, stopped by its master's PID when dropped and waited for, so that no worker outlives
//! it (killing the master alone leaves its workers running, holding their ports and any pipe
//! they inherited).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;

pub struct Nginx {
    child: std::process::Child,
    dir: PathBuf,
}

impl Nginx {
    /// Starts `binary` on the configuration `dir/nginx.conf` (its prefix `dir`, its error log
    /// `dir/error.log`) and waits until 127.0.0.1:`port` accepts connections.
    pub fn start(binary: &Path, dir: &Path, port: u16) -> anyhow::Result<Nginx> {
        let child = std::process::Command::new(binary)
            .arg("-p")
            .arg(dir)
            .arg("-e")
            .arg(dir.join("error.log"))
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            // Its own process group: a stop that has to force it takes the workers too.
            .process_group(0)
            .spawn()
            .with_context(|| format!("starting {} (apt-get install -y nginx)", binary.display()))?;
        let mut nginx = Nginx { child, dir: dir.to_owned() };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline || matches!(nginx.child.try_wait(), Ok(Some(_))) {
                anyhow::bail!("nginx did not start: {}", nginx.error_log());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(nginx)
    }

    /// The master's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("error.log")).unwrap_or_default()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // A graceful stop: the master waits for its workers (and waiting for the master reaps it).
        let _ = std::process::Command::new("kill").arg("-QUIT").arg(self.child.id().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let group = format!("-{}", self.child.id());
        let _ = std::process::Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.child.wait();
    }
}

/// The configuration `docs/deploy.md` documents, for `upstreams` (`host:port`) on
/// 127.0.0.1:`port`, with `workers` worker processes of `connections` connections each.
pub fn nginx_config(dir: &Path, port: u16, upstreams: &[&str], workers: usize, connections: usize) -> String {
    let root = std::fs::read_to_string("/proc/self/status")
        .map(|s| s.lines().any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0")))
        .unwrap_or(false);
    let servers: String =
        upstreams.iter().map(|u| format!("        server {};\n", u.trim_start_matches("http://"))).collect();
    let d = dir.display();
    // A proxied stream holds two descriptors (the visitor's connection and the replica's).
    let files = connections * 2 + 64;
    format!(
        r#"{user}worker_processes {workers};
worker_rlimit_nofile {files};
pid {d}/nginx.pid;
error_log {d}/error.log warn;
daemon off;
events {{ worker_connections {connections}; }}
http {{
    access_log off;
    client_body_temp_path {d}/client_body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    upstream parley {{
{servers}    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://parley;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            # Streams (SSE) pass through as they are written.
            proxy_buffering off;
            proxy_cache off;
            proxy_read_timeout 1h;
        }}
    }}
}}
"#,
        user = if root { "user root;\n" } else { "" },
    )
}
