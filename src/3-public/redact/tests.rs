use super::*;

fn redactor() -> Redactor {
    Redactor::new(Detector::builtin())
}

/// (text, the private part that must go, its category)
const LEAKS: &[(&str, &str, Category)] = &[
    ("server at http://10.20.30.40:8000/v1", "10.20.30.40:8000", Category::Endpoint),
    ("bind 192.168.1.20", "192.168.1.20", Category::Endpoint),
    ("peer 172.20.0.3:29500 up", "172.20.0.3:29500", Category::Endpoint),
    ("link-local 169.254.10.2", "169.254.10.2", Category::Endpoint),
    ("tailscale 100.101.102.103", "100.101.102.103", Category::Endpoint),
    ("ula [fd12:3456:789a::5]:8080 ok", "fd12:3456:789a::5", Category::Endpoint),
    ("iface fe80::1ff:fe23:4567:890a%eth0", "fe80::1ff:fe23:4567:890a", Category::Endpoint),
    ("mapped ::ffff:10.1.2.3 seen", "::ffff:10.1.2.3", Category::Endpoint),
    ("mapped hex ::ffff:c0a8:0101 seen", "::ffff:c0a8:0101", Category::Endpoint),
    ("see gpu-node-07.internal for logs", "gpu-node-07.internal", Category::Endpoint),
    ("mdns box.local:5000", "box.local:5000", Category::Endpoint),
    ("router.home.arpa", "router.home.arpa", Category::Endpoint),
    ("db.corp backup", "db.corp", Category::Endpoint),
    ("nas.lan backup", "nas.lan", Category::Endpoint),
    ("share http://nas.lan/share", "nas.lan", Category::Endpoint),
    ("open file://localhost/home/fuser/x", "fuser", Category::HostPath),
    (r"long \\?\C:\Users\fuser3\x", "fuser3", Category::HostPath),
    ("ask http://inference.", "inference", Category::Endpoint),
    ("ask http://inference, then", "inference", Category::Endpoint),
    ("mirror https://u:pw1@box.local:8443/x", "box.local:8443", Category::Endpoint),
    ("curl http://gpu-node-07:8000/health", "gpu-node-07:8000", Category::Endpoint),
    ("curl http://inference/v1/models", "inference", Category::Endpoint),
    ("bare dgx01:8080 answered", "dgx01:8080", Category::Endpoint),
    ("model at /home/alice/models/glm.gguf", "/home/alice/models/glm.gguf", Category::HostPath),
    ("mac /Users/bob/Downloads/x.log", "/Users/bob/Downloads/x.log", Category::HostPath),
    ("cache /root/.cache/hf", "/root/.cache/hf", Category::HostPath),
    (r"win C:\Users\carol\bench\run.ps1 done", r"C:\Users\carol\bench\run.ps1", Category::HostPath),
    (r#"{"cwd": "C:\\Users\\carol\\bench"}"#, r"C:\\Users\\carol\\bench", Category::HostPath),
    (r"share \\fileserver\bench\out.csv", r"\\fileserver\bench\out.csv", Category::HostPath),
    (r"wsl \\wsl$\Ubuntu\home\dave", r"\\wsl$\Ubuntu\home\dave", Category::HostPath),
    (r"wsl \\wsl.localhost\Ubuntu-24.04\srv", r"\\wsl.localhost\Ubuntu-24.04\srv", Category::HostPath),
    ("mount /mnt/c/Users/erin/Desktop", "/mnt/c/Users/erin/Desktop", Category::HostPath),
    ("open file:///home/alice/report.html", "/home/alice/report.html", Category::HostPath),
    ("open file://wsl.localhost/Ubuntu/home/dave/x.csv", "wsl.localhost/Ubuntu/home/dave", Category::HostPath),
    ("open file://fileserver/bench/out.csv", "fileserver/bench/out.csv", Category::HostPath),
    ("server 10.0.0.5 answered", "10.0.0.5", Category::Endpoint),
    ("node 10.0.0.6 down", "10.0.0.6", Category::Endpoint),
    ("GPU 0: H100 (UUID: GPU-5f3e2a1b-9c8d-4e7f-a6b5-c4d3e2f1a0b9)", "GPU-5f3e2a1b-9c8d-4e7f-a6b5-c4d3e2f1a0b9", Category::GpuUuid),
    ("lower gpu-5f3e2a1b-9c8d-4e7f-a6b5-c4d3e2f1a0b9", "gpu-5f3e2a1b-9c8d-4e7f-a6b5-c4d3e2f1a0b9", Category::GpuUuid),
    ("MIG-7a6b5c4d-3e2f-1a0b-9c8d-7e6f5a4b3c2d on", "MIG-7a6b5c4d-3e2f-1a0b-9c8d-7e6f5a4b3c2d", Category::GpuUuid),
    ("old MIG-GPU-5f3e2a1b-9c8d-4e7f-a6b5-c4d3e2f1a0b9/7/0", "MIG-GPU-5f3e2a1b-9c8d-4e7f-a6b5-c4d3e2f1a0b9/7/0", Category::GpuUuid),
    ("CUDA_VISIBLE_DEVICES=GPU-5f3e2a1b", "GPU-5f3e2a1b", Category::GpuUuid),
    ("Authorization: Bearer abcdef123456", "abcdef123456", Category::Credential),
    ("-H 'authorization: Basic dXNlcjpwYXNz'", "dXNlcjpwYXNz", Category::Credential),
    ("https://bench:hunter22@example.com/x", "bench:hunter22", Category::Credential),
    ("password=hunter22", "hunter22", Category::Credential),
    (r#"{"api_key": "abc123def456"}"#, "abc123def456", Category::Credential),
    ("HF_TOKEN: q1w2e3r4t5", "q1w2e3r4t5", Category::Credential),
    ("--api-key s3cr3t-value", "s3cr3t-value", Category::Credential),
    ("key sk-proj-AbCdEfGhIjKlMnOpQrStUvWx", "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx", Category::Credential),
    ("hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345", Category::Credential),
    ("ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", Category::Credential),
    ("github_pat_11ABCDEFG0123456789_abcdefghij", "github_pat_11ABCDEFG0123456789_abcdefghij", Category::Credential),
    ("aws AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", Category::Credential),
    ("slack xoxb-1234567890-abcdef", "xoxb-1234567890-abcdef", Category::Credential),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", Category::Credential),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "MIIEow", Category::Credential),
    // Token formats, from their issuers' documentation.
    ("git push glpat-AbCdEfGhIjKlMnOpQrSt", "glpat-AbCdEfGhIjKlMnOpQrSt", Category::Credential),
    ("NPM_CONFIG //registry.npmjs.org/:_authToken npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", Category::Credential),
    ("post https://hooks.slack.com/services/T01ABCDEF/B02GHIJKL/AbCdEfGhIjKlMnOpQrStUvWx", "T01ABCDEF/B02GHIJKL/AbCdEfGhIjKlMnOpQrStUvWx", Category::Credential),
    ("maps AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW ok", "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW", Category::Credential),
    ("stripe sk_live_51HabcdEFGhijKLmnop", "sk_live_51HabcdEFGhijKLmnop", Category::Credential),
    ("stripe rk_live_51HabcdEFGhijKLmnop", "rk_live_51HabcdEFGhijKLmnop", Category::Credential),
    ("curl -u bench:hunter22 https://api.example.com", "bench:hunter22", Category::Credential),
    ("curl --user=:onlypass https://api.example.com", ":onlypass", Category::Credential),
    ("clone https://:s3cr3tpw@git.example.com/x", ":s3cr3tpw", Category::Credential),
    ("clone https://gho16charTokenAbc123xyz@github.com/o/r", "gho16charTokenAbc123xyz", Category::Credential),
    // Paths that name a user.
    ("tmp /tmp/pytest-of-alice/pytest-3/test0", "alice", Category::HostPath),
    ("silverblue /var/home/alice/bench", "alice", Category::HostPath),
    ("nfs /data/home/bob/ckpt", "bob", Category::HostPath),
    ("tilde ~carol/models/x.gguf", "carol", Category::HostPath),
    // GPU UUIDs printed without the `GPU-` prefix.
    ("_CudaDeviceProperties(name='NVIDIA H100', uuid=5f3e2a1b-9c8d-4e7f-a6b5-c4d3e2f1a0b9)", "5f3e2a1b-9c8d-4e7f-a6b5-c4d3e2f1a0b9", Category::GpuUuid),
    (r#"{"gpu_uuid": "5f3e2a1b-9c8d-4e7f-a6b5-c4d3e2f1a0b9"}"#, "5f3e2a1b-9c8d-4e7f-a6b5-c4d3e2f1a0b9", Category::GpuUuid),
    ("NVIDIA_VISIBLE_DEVICES=5f3e2a1b-9c8d-4e7f-a6b5-c4d3e2f1a0b9", "5f3e2a1b-9c8d-4e7f-a6b5-c4d3e2f1a0b9", Category::GpuUuid),
    // Hosts, addresses, identities.
    ("|1|JfKTdBh7rNbXkVAQCRp4OQoPfmI=|USECr3SWf1JUPsms5AqfD5QfxkM= ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl", "JfKTdBh7rNbXkVAQCRp4OQoPfmI", Category::Endpoint),
    ("build-07,203.0.113.7 ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7", "build-07", Category::Endpoint),
    ("gpu-node-07 ether 3c:ec:ef:12:34:56 txqueuelen 1000", "3c:ec:ef:12:34:56", Category::Endpoint),
    ("dhcp gpu-node-07 3C-EC-EF-12-34-56", "3C-EC-EF-12-34-56", Category::Endpoint),
    ("run by alice.smith@acme-labs.io tonight", "alice.smith@acme-labs.io", Category::Endpoint),
    ("padded 010.000.000.005 seen", "010.000.000.005", Category::Endpoint),
    ("node ip-10-0-0-27.ec2.internal.log", "10-0-0-27", Category::Endpoint),
    ("pod 10-0-0-27.ns.pod.cluster.local ready", "10-0-0-27", Category::Endpoint),
    ("peer 192-168-1-10.nip.io up", "192-168-1-10", Category::Endpoint),
    // No neighbour switches a detector off.
    ("host_10.0.0.5 up", "10.0.0.5", Category::Endpoint),
    ("node_gpu-node-7.internal up", "gpu-node-7.internal", Category::Endpoint),
    ("Linux 10.0.0.5 vs WSL", "10.0.0.5", Category::Endpoint),
    (r#"{"windows": "172.28.160.2"}"#, "172.28.160.2", Category::Endpoint),
    (r#"{"v": "10.1.2.3"}"#, "10.1.2.3", Category::Endpoint),
    ("driver version 10.0.0.1", "10.0.0.1", Category::Endpoint),
    ("name=10.0.0.8", "10.0.0.8", Category::Endpoint),
];

/// Values campaigns are full of that must come through untouched.
const NEAR_MISSES: &[&str] = &[
    "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "rev 033446bb05c1d1e6a8c0e7d2f8b9a4c3d2e1f0a9",
    "image sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945",
    "model zai-org/GLM-4.7-Flash@8a1b2c3d",
    "vllm 0.0.0.dev1+g033446bb05",
    "tensorrt==10.3.0.26 and tensorrt >= 10.1.0.5 and cuDNN 9.1.0.70",
    "v10.0.0.1 and 10.3.0.26.1 and torch 2.4.1+cu121 and 10.1.0.5+cu121",
    "nvidia_cudnn_cu12-10.3.5.147-py3-none-manylinux_2_27_x86_64.whl",
    "tensorrt-10.3.0.26.tar.gz and tensorrt_cu12-10.3.0.26-1-py3-none-any.whl",
    "apt install tensorrt=10.3.0.26-1+cuda12.5 libnvinfer10=10.3.0.26-1+cuda12.5",
    "Pin: version 10.3.0.26-1+cuda12.5",
    "Package            Version\n------------------ ---------\nnumpy              1.26.4\ntensorrt           10.3.0.26\nnvidia-cudnn-cu12  10.3.5.147\n",
    "# packages in environment at /opt/conda:\n#\n# Name  Version  Build  Channel\ncudnn  9.1.0.70  h3b2d4a1_0  conda-forge\nlibnvjitlink  10.3.5.147  0  nvidia\n",
    "aws s3 cp s3://my-public-bucket/results.csv . and gs://open-datasets/x",
    "runs/gpu-20260908-1412/summary.json and gpu-20260908",
    r#"{"pattern": "\\d+\\.\\d+", "tex": "\\alpha\\beta \\frac{1}{2}"}"#,
    "sampling top_k:40, top-k:40, temperature:0.7, max-tokens:512, repetition-penalty:1.1",
    "remote git@github.com:zai-org/x.git and ssh://git@github.com/o/r and https://user@github.com/o/r",
    "mail noreply@github.com and ops@example.com and model@v1.safetensors",
    "pk_live_51HabcdEFGhijKLmnop is publishable, sk-test and npm_short",
    "docker run -u 1000:1000 and -u $USER:$PASS",
    "fingerprint 3c:ec:ef:12:34:56:78:9a:bc:de:f0:11:22:33:44:55 and 00:00:00:00:00:00",
    "time 12:34:56 and ec2-54-12-34-56.compute-1.amazonaws.com and 2026-09-08",
    "ssh-keygen -t ed25519 and ~/.ssh/known_hosts and ~2 GB and ~user",
    "public 8-8-8-8.nip.io and ip-203-0-113-5",
    "kernel 6.6.87.2-microsoft-standard-WSL2",
    "see https://huggingface.co/zai-org/GLM-4.7-Flash",
    "docs at https://docs.vllm.ai. and http://example.com, too",
    "mirror foo.corp.example.com and api.internal.example.com",
    "public 8.8.8.8 and docs 192.0.2.10 and 203.0.113.5",
    "loopback http://127.0.0.1:8000 and http://localhost:8080 and 0.0.0.0:8000",
    "ipv6 loopback ::1 and 2001:db8::1",
    "date 2026-09-08T12:34:56Z",
    "throughput 123.4 tok/s at 4096 ctx",
    "request 550e8400-e29b-41d4-a716-446655440000",
    "max_tokens=512 and \"eos_token\": \"<|endoftext|>\"",
    "ubuntu:22.04 and postgres:16 and status:200",
    "/usr/lib/x86_64-linux-gnu and /opt/conda/bin and ~/.cache/huggingface",
    "config settings.local.json and /usr/local/bin",
    "password: required, token=$HF_TOKEN, Authorization: Bearer <token>",
    "GPU-accelerated inference on an RTX 4090",
];

#[test]
fn leaks_are_found_and_replaced() {
    for (text, secret, category) in LEAKS {
        let r = redactor();
        let mut counts = Counts::new();
        let out = r.redact_counted(text, &mut counts);
        assert!(!out.contains(secret), "{secret:?} survived in {out:?}");
        assert_eq!(
            counts.get(category),
            Some(&1),
            "{text:?} -> {out:?} {counts:?}"
        );
        let again = r.redact(&out);
        assert_eq!(again, out, "placeholders must not be found again");
    }
}

#[test]
fn near_misses_survive() {
    let r = redactor();
    for text in NEAR_MISSES {
        let hits = r.detector.find(text.as_bytes());
        let spans: Vec<&str> = hits.iter().map(|h| &text[h.start..h.end]).collect();
        assert!(hits.is_empty(), "{text:?}: false alarm on {spans:?}");
    }
}

#[test]
fn same_value_same_placeholder() {
    let r = redactor();
    let out = r.redact("a GPU-5f3e2a1b-9c8d-4e7f-a6b5-c4d3e2f1a0b9 b GPU-00000000-1111-2222-3333-444444444444 c gpu-5f3e2a1b-9c8d-4e7f-a6b5-c4d3e2f1a0b9");
    assert_eq!(out, "a [gpu-uuid-1] b [gpu-uuid-2] c [gpu-uuid-1]");
    let json = r.redact(r#""C:\\Users\\carol\\x""#);
    let plain = r.redact(r"C:\Users\carol\x");
    assert_eq!(json, "\"[host-path-1]\"");
    assert_eq!(plain, "[host-path-1]");
}

#[test]
fn credentials_keep_their_labels() {
    let r = redactor();
    assert_eq!(
        r.redact("Authorization: Bearer abcdef123456"),
        "Authorization: Bearer [credential-1]"
    );
    assert_eq!(
        r.redact("https://bench:hunter22@10.0.0.9:8443/v1"),
        "https://[credential-2]@[private-endpoint-1]/v1"
    );
}

#[test]
fn pem_blocks_keep_their_line_count() {
    let r = redactor();
    let text = "a\n-----BEGIN PRIVATE KEY-----\nMIIB\nAAAA\n-----END PRIVATE KEY-----\nb";
    let out = r.redact(text);
    assert_eq!(out.lines().count(), text.lines().count());
    assert!(out.starts_with("a\n[credential-1]\n"));
}

#[test]
fn policy_denies_and_allows() {
    let policy = Policy {
        deny: vec!["alice".into(), "lab-7".into()],
        patterns: vec![r"RUN-\d{4}".into()],
        allow: vec!["10.0.0.1".into()],
        binary: vec![],
    };
    let r = Redactor::new(Detector::new([&policy]).unwrap());
    assert_eq!(
        r.redact("Alice ran RUN-0042 on lab-7 at 10.0.0.1, not malice, 10.0.0.2"),
        "[redacted-1] ran [redacted-2] on [redacted-3] at 10.0.0.1, not malice, [private-endpoint-1]"
    );
}

/// `redact_value` searches a value's texts joined before it searches them
/// one by one; wherever one of them holds something, it redacts exactly
/// what searching each does: a value, a key, a secret named by its key
/// or by its row's label, deep in the value, among a thousand clean rows,
/// and with a campaign's deny term.
#[test]
fn json_values_redacted_after_one_search_as_one_by_one() {
    let clean_rows: Vec<Value> = (0..1000)
        .map(|i| serde_json::json!({"file": format!("p{i:05}.md"), "title": format!("Evidence item {i}")}))
        .collect();
    let docs = [
        serde_json::json!({"pages": clean_rows.clone()}),
        serde_json::json!({"pages": clean_rows.clone(), "note": "on gpu-node-07.internal"}),
        serde_json::json!({"pages": clean_rows.clone(), "10.0.0.5": 1}),
        serde_json::json!({"pages": clean_rows.clone(), "api_key": "abcdef123456"}),
        serde_json::json!({"rows": [{"key": "api_key", "value": "abcdef123456"}]}),
        serde_json::json!({"a": [{"b": [{"token": "zyxwvu987654"}]}], "pages": clean_rows}),
        serde_json::json!({"who": "lab-7 ran it", "n": 3}),
        serde_json::json!({"pages": clean_rows.clone(), "run": "RUN-0042"}),
    ];
    let policy = Policy {
        deny: vec!["lab-7".into()],
        patterns: vec![r"RUN-\d{4}".into()],
        ..Policy::default()
    };
    // The clean rows are passed over after one search, and only they.
    let mut joined = String::new();
    let det = Detector::new([&policy]).unwrap();
    assert!(json_texts(&docs[0], &mut joined, 16 << 20).is_some());
    assert!(!det.any_candidate(joined.as_bytes()));
    assert!(json_texts(&docs[0], &mut String::new(), 1000).is_none());
    assert!(docs[1..].iter().all(|d| {
        let mut t = String::new();
        json_texts(d, &mut t, 16 << 20).is_some() && det.any_candidate(t.as_bytes())
    }));
    let mut changed = 0;
    for doc in docs {
        let (joined, each) = (
            Redactor::new(Detector::new([&policy]).unwrap()),
            Redactor::new(Detector::new([&policy]).unwrap()),
        );
        let (mut a, mut b) = (doc.clone(), doc.clone());
        let (mut ca, mut cb) = (Counts::new(), Counts::new());
        joined.redact_value(&mut a, &mut ca);
        each.redact_each(&mut b, &mut cb);
        assert_eq!(a, b);
        assert_eq!(describe(&ca), describe(&cb));
        changed += usize::from(a != doc);
    }
    assert_eq!(changed, 7);
}

/// A policy pattern anchored at the text's start or end matches a string
/// alone, not one joined after others: texts are then searched one by
/// one, by `any_candidate_in` and by `redact_value` alike.
#[test]
fn anchored_policy_patterns_are_not_searched_joined() {
    for pattern in [
        r"\Aabcdef123456\z",
        r"(?-m:^)abcdef123456$",
        r"abcdef123456\z",
    ] {
        let policy = Policy {
            patterns: vec![pattern.into()],
            ..Policy::default()
        };
        let det = Detector::new([&policy]).unwrap();
        assert!(det.any_candidate(b"abcdef123456"), "{pattern}");
        assert!(
            det.any_candidate_in(["clean", "abcdef123456", "clean"]),
            "{pattern}"
        );
        let r = Redactor::new(det);
        let mut v = serde_json::json!({"pages": ["clean", "abcdef123456", "also clean"]});
        r.redact_value(&mut v, &mut Counts::new());
        assert_eq!(v["pages"][1], "[redacted-1]", "{pattern}");
    }
    // Line anchors join: `^` and `$` match at every line.
    let policy = Policy {
        patterns: vec![r"^abcdef123456$".into()],
        ..Policy::default()
    };
    assert!(Detector::new([&policy]).unwrap().joinable);
}

#[test]
fn json_values_and_keys() {
    let r = redactor();
    let mut v: Value =
        serde_json::json!({"host": "gpu-node-07.internal", "10.0.0.5": [ "/home/alice/x" ]});
    let mut counts = Counts::new();
    r.redact_value(&mut v, &mut counts);
    assert_eq!(
        v,
        serde_json::json!({"host": "[private-endpoint-2]", "[private-endpoint-1]": ["[host-path-1]"]})
    );
    assert_eq!(describe(&counts), "2 private-endpoint, 1 host-path");
}

#[test]
fn deny_terms_match_across_any_white_space() {
    let policy = Policy {
        deny: vec!["Mallory Quinn".into()],
        ..Default::default()
    };
    let r = Redactor::new(Detector::new([&policy]).unwrap());
    for text in [
        "Mallory\nQuinn",
        "Mallory  Quinn",
        "mallory\u{a0}quinn",
        "MALLORY QUINN",
    ] {
        assert!(r.redact(text).starts_with("[redacted-"), "{text:?}");
    }
}

#[test]
fn placeholders_in_a_published_policy_are_not_deny_terms() {
    assert!(is_placeholder("[gpu-uuid-3]") && is_placeholder("[redacted-12]"));
    assert!(!is_placeholder("[gpu-uuid-]") && !is_placeholder("[secret-1]"));
    assert!(!is_placeholder("dgx-lab-3"));
    let published = Policy {
        deny: vec!["[redacted-1]".into(), "dgx-lab-3".into()],
        ..Default::default()
    };
    let r = Redactor::new(Detector::new([&published]).unwrap());
    assert_eq!(
        r.redact("[redacted-1] on dgx-lab-3"),
        "[redacted-1] on [redacted-1]"
    );
}

#[test]
fn parsed_secrets_stay_redacted_without_their_key_beside_them() {
    let r = redactor();
    let mut doc: serde_json::Value = serde_json::from_str(
        r#"{"api_key": "kq83hd72ks9sl2", "rows": [{"key": "HF_TOKEN", "value": "Zq9xW7vB3nM1kL5j"}, {"key": "max_tokens", "value": "4096000"}], "note": "plain words here"}"#,
    )
    .unwrap();
    let mut counts = Counts::new();
    r.redact_value(&mut doc, &mut counts);
    let text = doc.to_string();
    assert!(
        !text.contains("kq83hd72ks9sl2") && !text.contains("Zq9xW7vB3nM1kL5j"),
        "{text}"
    );
    assert!(
        text.contains("4096000") && text.contains("plain words here"),
        "{text}"
    );
    assert_eq!(counts.get(&Category::Credential), Some(&2));
    // The same secret in raw text gets the same placeholder.
    assert_eq!(
        r.redact(r#""api_key": "kq83hd72ks9sl2""#),
        format!(r#""api_key": "{}""#, doc["api_key"].as_str().unwrap())
    );
}

#[test]
fn tags_come_out_inline_ones_without_a_trace() {
    use super::scan::strip_tags;
    assert_eq!(strip_tags("a<em>b</EM>c<p>d\n<br\n>e"), "abc d\n \ne");
    assert_eq!(strip_tags("10.0.<span class=\"x\">0</span>.5"), "10.0.0.5");
    assert_eq!(strip_tags("10.0.<//em>0.5"), "10.0.0.5");
    // A bare `<` opens a "tag" up to the next `>`, as before.
    assert_eq!(strip_tags("x < y, é<b>é</b>"), "x  é");
    assert_eq!(
        strip_tags("open <tag never closed"),
        "open <tag never closed"
    );
}

/// A value found in a decoded view is placed on the raw bytes it came
/// from: across tags and references (markup), and in a binary's UTF-16LE
/// strings (two raw bytes per character).
#[test]
fn views_place_values_on_their_raw_bytes() {
    let det = Detector::builtin();
    let page = b"<p>at 10.0.<em>0</em>&#46;5 and <b>x</b> 192&period;168.1.7</p>";
    let hits = scan::find_all(&det, page, scan::View::Markup);
    let spans: Vec<&str> = hits
        .iter()
        .map(|h| std::str::from_utf8(&page[h.start..h.end]).unwrap())
        .collect();
    assert_eq!(spans, ["10.0.<em>0</em>&#46;5", "192&period;168.1.7"]);

    let mut binary = b"\x00\x01head\x00".to_vec();
    let at = binary.len();
    for c in "host 10.9.8.7 up".bytes() {
        binary.extend([c, 0]);
    }
    binary.extend(b"\x00\x00tail");
    let hits = scan::find_all(&det, &binary, scan::View::Strings);
    assert_eq!(hits.len(), 1);
    let start = at + 2 * "host ".len();
    assert_eq!(
        (hits[0].start, hits[0].end),
        (start, start + 2 * "10.9.8.7".len())
    );
}

/// Chunks pulled one at a time (the one pass over a large file) are the
/// chunks `for_each_chunk` feeds, whatever buffers are handed back: cut
/// at line breaks, a PEM block kept whole across a chunk's edge, a line
/// with no break cut at a space.
#[test]
fn chunks_pulled_one_by_one_are_the_chunks_fed() {
    let mut text = Vec::new();
    while text.len() < scan::CHUNK - 100 {
        text.extend_from_slice(b"2026 step ok peer 10.1.2.3\n");
    }
    text.extend_from_slice(b"-----BEGIN RSA PRIVATE KEY-----\n");
    for _ in 0..400 {
        text.extend_from_slice(b"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=\n");
    }
    text.extend_from_slice(b"-----END RSA PRIVATE KEY-----\n");
    for _ in 0..(3 * scan::CHUNK / 10) {
        text.extend_from_slice(b"word ");
    }
    text.extend_from_slice(b"\nlast line\n");
    let det = Detector::builtin();
    let seams = Some(scan::Seams {
        det: &det,
        view: scan::View::Plain,
    });
    let mut fed: Vec<Vec<u8>> = Vec::new();
    scan::for_each_chunk(&text[..], seams, |c| {
        fed.push(c.to_vec());
        Ok(())
    })
    .unwrap();
    assert!(fed.len() >= 3, "{} chunks", fed.len());
    let mut pulled: Vec<Vec<u8>> = Vec::new();
    let mut chunks = scan::Chunks::with_buffer(&text[..], Vec::new(), seams);
    // Hand back a used buffer, full of other bytes, each time.
    let mut spare = vec![b'z'; 1000];
    while let Some(c) = chunks.next_chunk(spare).unwrap() {
        spare = c.clone();
        pulled.push(c);
    }
    assert_eq!(pulled, fed);
    assert_eq!(pulled.concat(), text);
    let pem_whole = pulled.iter().any(|c| {
        let s = String::from_utf8_lossy(c);
        s.contains("-----BEGIN RSA") && s.contains("-----END RSA")
    });
    assert!(pem_whole);
}

/// Chunks of `text` as [`scan::for_each_chunk`] cuts them, with seams of
/// the built-in detector or without.
fn chunked(text: &[u8], view: scan::View, mended: bool) -> Vec<Vec<u8>> {
    let det = Detector::builtin();
    let seams = mended.then_some(scan::Seams { det: &det, view });
    let mut chunks = Vec::new();
    scan::for_each_chunk(text, seams, |c| {
        chunks.push(c.to_vec());
        Ok(())
    })
    .unwrap();
    chunks
}

/// Every finding of the chunks, searched one by one, as (offset in the
/// whole text, length).
fn found_in_chunks(chunks: &[Vec<u8>], view: scan::View) -> Vec<(usize, usize)> {
    let det = Detector::builtin();
    let mut at = 0;
    let mut found = Vec::new();
    for c in chunks {
        for h in scan::find_all(&det, c, view) {
            found.push((at + h.start, h.end - h.start));
        }
        at += c.len();
    }
    found
}

/// A value a cut would split (a key at the end of one chunk, its value
/// on the next line, also where the key's line ends exactly where the
/// first read stops, and a value longer than the window looked at; a
/// value in a line too long to end within a chunk, cut at a space; the
/// same behind Markdown escapes) lies whole in one
/// chunk once cuts are mended, so the chunks searched one by one find what
/// one search of the whole text finds. Without seams the cut splits it and
/// neither chunk finds it (the gap this closes).
#[test]
fn a_value_a_cut_would_split_is_kept_in_one_chunk() {
    let filler = |text: &mut Vec<u8>, upto: usize| {
        while text.len() + 64 <= upto {
            text.extend_from_slice(&[b'x'; 63]);
            text.push(b'\n');
        }
        let pad = upto - text.len();
        text.extend(std::iter::repeat_n(b'y', pad.saturating_sub(1)));
        if pad > 0 {
            text.push(b'\n');
        }
    };
    // 10,000 characters, then more than a megabyte of words before the
    // line ends: the cut cannot move to a line break within reach.
    let words = b"w ".repeat(600_000);
    let long_value = [b"  ".as_slice(), &[b'Z'; 10_000], b" ", &words, b"\n"].concat();
    let cases: [(&str, scan::View, &[u8], &[u8]); 5] = [
        (
            "next line",
            scan::View::Plain,
            b"api_token:\n",
            b"  Zq8vLm3pRt7wXy2KabcdefGH\n",
        ),
        (
            "at the edge",
            scan::View::Plain,
            b"api_token:\n",
            b"  Zq8vLm3pRt7wXy2KabcdefGH\n",
        ),
        (
            "longer than the window",
            scan::View::Plain,
            b"api_token:\n",
            &long_value,
        ),
        ("long line", scan::View::Plain, b"", b""),
        (
            "escaped",
            scan::View::Markdown,
            b"api\\_token:\n",
            b"  Zq8vLm3pRt7wXy2Kabc\n",
        ),
    ];
    for (name, view, key, value) in cases {
        let mut text = Vec::new();
        if name == "long line" {
            // One line longer than a chunk: its last space before the
            // chunk's end falls between `password:` and the value.
            let key = b" password: ";
            text.resize(scan::CHUNK - 4 - key.len(), b'w');
            text.extend_from_slice(key);
            text.extend_from_slice(b"hunter2hunter2xyz and more words after it");
            text.resize(scan::CHUNK + 8192, b'v');
            text.extend_from_slice(b" end\n");
        } else if name == "at the edge" {
            // The key's line ends exactly where the first read stops.
            filler(&mut text, scan::CHUNK - key.len());
            text.extend_from_slice(key);
            text.extend_from_slice(value);
        } else {
            // The key's line ends 5 bytes before the chunk's end.
            filler(&mut text, scan::CHUNK - 5 - key.len());
            text.extend_from_slice(key);
            text.extend_from_slice(value);
        }
        for _ in 0..1000 {
            text.extend_from_slice(b"2026 step ok\n");
        }
        let det = Detector::builtin();
        let whole: Vec<(usize, usize)> = scan::find_all(&det, &text, view)
            .iter()
            .map(|h| (h.start, h.end - h.start))
            .collect();
        assert_eq!(whole.len(), 1, "{name}: {whole:?}");
        let plain = chunked(&text, view, false);
        assert!(plain.len() >= 2, "{name}: {} chunks", plain.len());
        assert_ne!(
            found_in_chunks(&plain, view),
            whole,
            "{name}: no gap to close"
        );
        let mended = chunked(&text, view, true);
        assert!(mended.concat() == text, "{name}");
        assert_eq!(found_in_chunks(&mended, view), whole, "{name}");
    }
}

/// Mended cuts are the cuts made without seams wherever no value crosses
/// them, and a value longer than a chunk's slack is not followed further
/// (memory stays bounded): its first characters, after its key, are
/// still found in the chunk before the cut.
#[test]
fn cuts_move_only_for_values_and_only_so_far() {
    let mut text = Vec::new();
    while text.len() < 3 * scan::CHUNK {
        text.extend_from_slice(b"2026 step ok peer 10.1.2.3 answered\n");
    }
    let view = scan::View::Plain;
    let lengths =
        |mended| -> Vec<usize> { chunked(&text, view, mended).iter().map(Vec::len).collect() };
    assert_eq!(lengths(true), lengths(false));

    let mut long = Vec::new();
    long.resize(scan::CHUNK - 20, b'w');
    long.extend_from_slice(b" password: ");
    long.resize(3 * scan::CHUNK, b'v');
    long.extend_from_slice(b" end\n");
    let chunks = chunked(&long, view, true);
    assert!(chunks.concat() == long);
    assert!(
        chunks.iter().all(|c| c.len() <= 2 * scan::CHUNK),
        "a chunk ran on"
    );
    // The value starts right after `password: `, before the cut.
    let found = found_in_chunks(&chunks, view);
    assert_eq!(
        found.first().map(|f| f.0),
        Some(scan::CHUNK - 9),
        "{found:?}"
    );
}

/// Lines each ending in a key whose value starts the next line: no line
/// break among them may be cut without splitting a value, so a cut there
/// is moved a bounded number of times (each move searches the text
/// around it again), not line by line up to the slack.
#[test]
fn a_chain_of_keys_and_values_moves_a_cut_a_bounded_number_of_times() {
    let mut text = Vec::new();
    let mut n = 0u32;
    while text.len() < scan::CHUNK - (64 << 10) {
        text.extend_from_slice(b"2026 step ok\n");
    }
    while text.len() < scan::CHUNK + (2 << 20) {
        text.extend_from_slice(format!("  V{n:08} api_token:\n").as_bytes());
        n += 1;
    }
    text.extend_from_slice(b"end\n");
    let chunks = chunked(&text, scan::View::Plain, true);
    assert!(chunks.concat() == text);
    let first = chunks[0].len();
    assert!(first > scan::CHUNK - (64 << 10), "{first}");
    assert!(first < scan::CHUNK + (128 << 10), "moved {first} bytes on");
}

/// The preview's scan of large files cuts them by content, at lines
/// chosen by their bytes: keys alone on their line, each value on the
/// next, are each found once, whichever of those lines a cut follows.
#[test]
fn content_cuts_keep_a_key_and_its_value_together() {
    let (dir, path, _) = repeated_rows("seams", b"", 0);
    let path = path.with_file_name("keys.log");
    let mut text = Vec::new();
    let mut pairs = 0;
    while text.len() < 3 << 20 {
        let pair = format!("run{pairs:08}_api_token:\n  Zq8vLm{pairs:08}RtXyab\n");
        text.extend_from_slice(pair.as_bytes());
        pairs += 1;
    }
    std::fs::write(&path, &text).unwrap();
    let builtin = Detector::builtin();
    let fp: std::sync::Arc<str> = builtin.fingerprint().into();
    let memo = scan::CleanChunks::default();
    let batched = scan::scan_file_remembered(&builtin, &path, (&memo, &fp)).unwrap();
    let whole = scan::scan_file(&builtin, &path).unwrap();
    let at = |s: &scan::Scanned| -> Vec<(usize, usize)> {
        s.hits.iter().map(|(l, c, _)| (*l, *c)).collect()
    };
    assert_eq!(whole.hits.len(), pairs);
    assert_eq!(batched.hits.len(), pairs, "a cut hid some values");
    assert!(at(&batched) == at(&whole), "found at other places");
    std::fs::remove_dir_all(dir).unwrap();
}

/// Rewinding to a mark forgets exactly the values numbered since, and
/// numbering goes on from the mark.
#[test]
fn rewind_forgets_what_was_numbered_since_the_mark() {
    let r = redactor();
    let hit = |key: &str, category| Hit {
        start: 0,
        end: 1,
        category,
        key: key.to_string(),
    };
    r.register(&[hit("a", Category::Endpoint), hit("p", Category::HostPath)]);
    let mark = r.mark();
    r.register(&[
        hit("a", Category::Endpoint),
        hit("b", Category::Endpoint),
        hit("u", Category::GpuUuid),
    ]);
    r.rewind(mark);
    let shown = |key: &str, category| {
        let text = b"x";
        let h = [hit(key, category)];
        String::from_utf8(r.replace(text, &h, &mut Counts::new()).into_owned()).unwrap()
    };
    assert_eq!(shown("c", Category::Endpoint), "[private-endpoint-2]");
    assert_eq!(shown("a", Category::Endpoint), "[private-endpoint-1]");
    assert_eq!(shown("u2", Category::GpuUuid), "[gpu-uuid-1]");
    assert_eq!(shown("b", Category::Endpoint), "[private-endpoint-3]");
}

/// An audit.json of `row` repeated to at least `len` bytes, in a folder
/// of its own named `name`; returns the folder, the file and its text.
fn repeated_rows(
    name: &str,
    row: &[u8],
    len: usize,
) -> (std::path::PathBuf, std::path::PathBuf, Vec<u8>) {
    let dir = std::env::temp_dir().join(format!("exhibit-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("audit.json");
    let mut text = Vec::new();
    while text.len() < len {
        text.extend_from_slice(row);
    }
    std::fs::write(&path, &text).unwrap();
    (dir, path, text)
}

/// The preview rescan's memory of clean chunks: a chunk is known by the
/// detector and its bytes, so a changed chunk is searched (and its lines
/// counted on from the chunk skipped before it), another detector knows
/// nothing of it, and what two builds did not meet is forgotten.
#[test]
fn clean_chunks_are_known_by_detector_and_bytes() {
    let row = b"    {\"page\": \"index.md\", \"text\": \"149.02\", \"source\": \"lab-7\"},\n";
    let (dir, path, text) = repeated_rows("clean-chunks", row, scan::CHUNK + 4096);
    let builtin = Detector::builtin();
    let memo = scan::CleanChunks::default();
    let fp = builtin.fingerprint().into();
    let first = scan::scan_file_remembered(&builtin, &path, (&memo, &fp)).unwrap();
    assert!(first.hits.is_empty());
    assert_eq!(memo.known(), 2, "both chunks were clean");
    // The second chunk changes: a private address on its last line.
    let lines = text.iter().filter(|&&b| b == b'\n').count();
    let mut changed = text.clone();
    changed.extend_from_slice(b"    {\"page\": \"10.1.2.3\"}\n");
    std::fs::write(&path, &changed).unwrap();
    let second = scan::scan_file_remembered(&builtin, &path, (&memo, &fp)).unwrap();
    let found: Vec<(usize, usize)> = second.hits.iter().map(|(l, c, _)| (*l, *c)).collect();
    assert_eq!(found, vec![(lines + 1, 15)]);
    assert_eq!(memo.known(), 2, "the changed chunk was not found clean");
    // A detector denying `lab-7` finds it in the chunk the builtin rules
    // found clean.
    let policy = Policy {
        deny: vec!["lab-7".into()],
        ..Policy::default()
    };
    let denying = Detector::new([&policy]).unwrap();
    let other = denying.fingerprint().into();
    let third = scan::scan_file_remembered(&denying, &path, (&memo, &other)).unwrap();
    assert_eq!(third.hits.first().map(|(l, c, _)| (*l, *c)), Some((1, 55)));
    // Two builds meeting none of them: forgotten.
    memo.next_build();
    memo.next_build();
    assert_eq!(memo.known(), 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A chunk is known clean by its bytes, not by the sample they are looked
/// up by: one that differs from a kept one only where no sample falls
/// (same length, same ends) is not known, nor one kept for another
/// detector or view.
#[test]
fn a_chunk_differing_only_between_the_samples_is_not_known() {
    let row = b"    {\"page\": \"index.md\", \"text\": \"149.02\", \"source\": \"lab-7777\"},\n";
    let mut chunk = Vec::new();
    while chunk.len() < 40_000 {
        chunk.extend_from_slice(row);
    }
    let memo = scan::CleanChunks::default();
    let fp: std::sync::Arc<str> = Detector::builtin().fingerprint().into();
    memo.remember(&fp, scan::View::Json, &chunk);
    assert!(memo.knows(&fp, scan::View::Json, &chunk));
    assert!(!memo.knows(&fp, scan::View::Plain, &chunk));
    assert!(!memo.knows("another detector", scan::View::Json, &chunk));
    // `lab-7777` becomes an address of the same length, in a row past the
    // first 256 bytes and clear of the 64-byte stretches sampled at each
    // sixteenth.
    let stretch = chunk.len() / 16;
    let at = (0..chunk.len() - 8)
        .filter(|&i| &chunk[i..i + 8] == b"lab-7777")
        .find(|&i| i > 300 && i % stretch > 100 && i % stretch + 8 < stretch - 10)
        .unwrap();
    let mut changed = chunk.clone();
    changed[at..at + 8].copy_from_slice(b"10.1.2.3");
    assert!(!memo.knows(&fp, scan::View::Json, &changed));
}

/// The preview's rescan cuts by content: an edit that lengthens the first
/// line of a 12 MiB audit.json by 200 bytes changes the first chunk only, the chunks
/// after it are the bytes the memory knows, and a value on the last line
/// is still placed on its line.
#[test]
fn an_edit_near_the_start_leaves_the_later_chunks_known() {
    let dir = std::env::temp_dir().join(format!("exhibit-content-cuts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("audit.json");
    let mut text = b"{\n  \"title\": \"Cell group 17\",\n".to_vec();
    let mut n = 0;
    while text.len() < 3 * scan::CHUNK {
        text.extend_from_slice(
            format!("    {{\"page\": \"p.md\", \"n\": {n}, \"text\": \"149.02\"}},\n").as_bytes(),
        );
        n += 1;
    }
    std::fs::write(&path, &text).unwrap();
    let builtin = Detector::builtin();
    let (memo, fp) = (scan::CleanChunks::default(), builtin.fingerprint().into());
    assert!(scan::scan_file_remembered(&builtin, &path, (&memo, &fp))
        .unwrap()
        .hits
        .is_empty());
    let chunks = memo.known();
    assert!(chunks >= 4, "{chunks} chunks");
    // Four lines longer: every cut at a fixed size moves.
    let title = format!(
        "{{\n  \"title\": \"Cell group 17 ({})\",\n",
        "edited ".repeat(30)
    );
    let mut edited = title.into_bytes();
    edited.extend_from_slice(&text[b"{\n  \"title\": \"Cell group 17\",\n".len()..]);
    let lines = edited.iter().filter(|&&b| b == b'\n').count();
    edited.extend_from_slice(b"    {\"page\": \"10.1.2.3\"}\n");
    std::fs::write(&path, &edited).unwrap();
    let second = scan::scan_file_remembered(&builtin, &path, (&memo, &fp)).unwrap();
    let found: Vec<(usize, usize)> = second.hits.iter().map(|(l, c, _)| (*l, *c)).collect();
    assert_eq!(found, vec![(lines + 1, 15)]);
    // The edited first chunk is new; the last (with the address) is not
    // clean; every chunk between is one the first scan found.
    assert_eq!(memo.known(), chunks + 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Bytes in memory searched in place find what the same bytes read as a
/// stream do: hits, lines, columns, and binary or archive content told
/// apart the same way.
#[test]
fn bytes_in_memory_scan_as_a_stream_does() {
    let det = Detector::builtin();
    let page = "<p>ok</p>\n<p>host <em>10.0.</em>0.5 and é 192.168.1.20</p>\n<a href=\"http://10.1.2.3/\">x</a>\n";
    let texts: Vec<(Vec<u8>, scan::View)> = vec![
        (page.as_bytes().to_vec(), scan::View::Markup),
        (page.repeat(600).into_bytes(), scan::View::Markup),
        (
            b"a **10.0**.0.7 b\n\\/home/alice/x\n".to_vec(),
            scan::View::Markdown,
        ),
        (
            br#"{"u": "http:\/\/10.2.3.4\/"}"#.to_vec(),
            scan::View::Json,
        ),
        (
            b"plain 10.9.8.7\0then 10.9.8.6 after a NUL\n".to_vec(),
            scan::View::Plain,
        ),
        (vec![0x1F, 0x8B, 0, 0], scan::View::Plain),
        (Vec::new(), scan::View::Plain),
    ];
    for (bytes, view) in texts {
        let fast = scan::scan_bytes(&det, &bytes, view).unwrap();
        let stream = scan::scan_reader(&det, std::io::Cursor::new(&bytes), view).unwrap();
        assert_eq!(format!("{fast:?}"), format!("{stream:?}"), "{view:?}");
    }
    let fast = scan::scan_bytes(&det, page.as_bytes(), scan::View::Markup).unwrap();
    let lines: Vec<(usize, usize)> = fast.hits.iter().map(|(l, c, _)| (*l, *c)).collect();
    assert_eq!(lines, [(2, 13), (2, 33), (3, 17)]);
}

/// The preview's rescan of a large generated file, cut by content and
/// searched a batch of chunks at a time, finds what a scan of it in chunks
/// of `scan::CHUNK`, one after another, finds: the same values on the same
/// lines and columns, in the first chunk, across batches and on the last
/// line. With a NUL byte on the way, both read it as a binary's printable
/// runs from that chunk on, and still find what is before and after it.
#[test]
fn large_files_searched_in_batches_give_what_one_chunk_after_another_does() {
    let row = b"    {\"page\": \"index.md\", \"text\": \"149.02\", \"line\": 7},\n";
    let (dir, path, mut text) = repeated_rows("batches", row, 5 * (2 << 20) + 777);
    let planted: &[&[u8]] = &[b"ops@example-corp.com", b"10.1.2.3", b"db-7.internal:8080"];
    let mut at = 3;
    while at < text.len() {
        let v = planted[at % planted.len()];
        let end = (at + v.len()).min(text.len());
        text[at..end].copy_from_slice(&v[..end - at]);
        at += 333_331;
    }
    text.extend_from_slice(b"{\"last\": \"10.9.8.7\"}");
    let builtin = Detector::builtin();
    let fp: std::sync::Arc<str> = builtin.fingerprint().into();
    let lines = |s: &scan::Scanned| -> Vec<(usize, usize)> {
        s.hits.iter().map(|(l, c, _)| (*l, *c)).collect()
    };
    let both = |text: &[u8]| {
        std::fs::write(&path, text).unwrap();
        let memo = scan::CleanChunks::default();
        let batched = scan::scan_file_remembered(&builtin, &path, (&memo, &fp)).unwrap();
        (batched, scan::scan_file(&builtin, &path).unwrap())
    };
    let (batched, whole) = both(&text);
    assert!(batched.hits.len() > 20, "{}", batched.hits.len());
    assert_eq!(lines(&batched), lines(&whole));
    assert!(!batched.binary && !whole.binary);
    let last_line = text.iter().filter(|&&b| b == b'\n').count() + 1;
    assert_eq!(lines(&batched).last(), Some(&(last_line, 11)));
    // A NUL byte two thirds in, a value right after it.
    let nul = 7 * (1 << 20);
    text[nul] = 0;
    text[nul + 1..nul + 9].copy_from_slice(b"10.4.4.4");
    let (batched, whole) = both(&text);
    assert!(batched.binary && whole.binary);
    let before = |s: &scan::Scanned| -> usize {
        s.hits
            .iter()
            .filter(|(l, _, _)| l * row.len() < nul - (4 << 20))
            .count()
    };
    assert!(before(&batched) > 5 && before(&batched) == before(&whole));
    let at_nul = text[..nul].iter().filter(|&&b| b == b'\n').count() + 1;
    assert!(
        batched.hits.iter().any(|(l, _, _)| *l == at_nul),
        "the value after the NUL"
    );
    assert!(
        whole.hits.iter().any(|(l, _, _)| *l == at_nul),
        "the value after the NUL"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
