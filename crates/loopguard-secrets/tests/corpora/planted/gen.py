#!/usr/bin/env python3
"""Writes planted.tsv and decoys.tsv: real-format secrets planted in the places they are found
(env, YAML, JSON, Python, JS, Go, shell, Terraform, Dockerfile, Kubernetes, Markdown, logs, diffs,
tool-call payloads), and decoys that look random but are not secrets. Values are random (seeded),
shaped after the vendors' public formats. `python3 gen.py` rewrites both files; tests/planted.rs
measures the scanner against them (recall, and no decoy flagged)."""
import base64, json, random, string, zlib

R = random.Random(20261201)
AL = string.ascii_letters + string.digits
def rnd(n, alphabet=AL): return ''.join(R.choice(alphabet) for _ in range(n))
def hexs(n): return rnd(n, '0123456789abcdef')
def b62(n):
    while True:
        s = rnd(n)
        if any(c.isdigit() for c in s) and any(c.isupper() for c in s) and any(c.islower() for c in s): return s
def b64url(b): return base64.urlsafe_b64encode(b).decode().rstrip('=')

def github(prefix='ghp_'):
    body = b62(30)
    crc = zlib.crc32(body.encode()) & 0xffffffff
    digits = ''
    while crc: crc, r = divmod(crc, 62); digits = (string.digits + string.ascii_uppercase + string.ascii_lowercase)[r] + digits
    return prefix + body + digits.rjust(6, '0')
def aws_id(): return R.choice(['AKIA', 'ASIA']) + rnd(16, string.ascii_uppercase + '234567')
def aws_secret():
    while True:
        s = rnd(40, AL + '/+')
        if s[0] not in '/+': return s
def jwt(extra=None):
    h = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    p = b64url(json.dumps(extra or {"sub": rnd(8), "iat": 1764547200 + R.randint(0, 9999), "scope": "admin"}).encode())
    return f"{h}.{p}.{b64url(bytes(R.randrange(256) for _ in range(32)))}"
def password():
    while True:
        s = rnd(R.randint(10, 18), AL + '!#%&*+-.=?@^_~')
        if sum(c.isdigit() for c in s) and sum(c.isalpha() for c in s) and not s[0] in '-.': return s
def pem(kind='RSA PRIVATE KEY'):
    body = base64.b64encode(bytes(R.randrange(256) for _ in range(180))).decode()
    lines = [body[i:i+64] for i in range(0, len(body), 64)]
    return f"-----BEGIN {kind}-----\n" + "\n".join(lines) + f"\n-----END {kind}-----"

# (kind, generator of the secret value)
TOKENS = [
    ("github-pat", lambda: github('ghp_')),
    ("github-oauth", lambda: github('gho_')),
    ("github-fine-grained-pat", lambda: "github_pat_" + b62(22) + "_" + b62(59)),
    ("gitlab-token", lambda: "glpat-" + rnd(20, AL + '_-')),
    ("slack-bot-token", lambda: f"xoxb-{R.randint(10**10, 10**11)}-{R.randint(10**12, 10**13)}-{b62(24)}"),
    ("stripe-secret-key", lambda: "sk_live_" + b62(24)),
    ("openai-api-key", lambda: "sk-proj-" + rnd(64, AL + '_-') + "T3BlbkFJ" + rnd(20)),
    ("anthropic-api-key", lambda: "sk-ant-api03-" + rnd(93, AL + '_-') + "AA"),
    ("aws-access-key-id", aws_id),
    ("npm-token", lambda: "npm_" + b62(36)),
    ("sendgrid-api-key", lambda: "SG." + rnd(22, AL + '_-') + "." + rnd(43, AL + '_-')),
    ("gcp-api-key", lambda: "AIza" + rnd(35, AL + '_-')),
    ("huggingface-token", lambda: "hf_" + rnd(34, string.ascii_letters)),
    ("digitalocean-token", lambda: "dop_v1_" + hexs(64)),
    ("jwt", jwt),
]

# Contextual secrets: (kind, template with {v}, generator)
CONTEXT = [
    ("aws-secret", "AWS_SECRET_ACCESS_KEY={v}", aws_secret),
    ("aws-secret", "aws_secret_access_key = {v}", aws_secret),
    ("aws-secret", '  "SecretAccessKey": "{v}",', aws_secret),
    ("aws-secret", "export AWS_SECRET_KEY=\"{v}\"", aws_secret),
    ("aws-secret", 'provider "aws" {{\n  access_key = "' + "AKIA" + "Q" * 0 + '{id}"\n  secret_key = "{v}"\n}}', aws_secret),
    ("aws-secret", "s3 = boto3.client('s3', aws_secret_access_key='{v}')", aws_secret),
    ("azure-conn", "DefaultEndpointsProtocol=https;AccountName=stor{n};AccountKey={v};EndpointSuffix=core.windows.net", lambda: base64.b64encode(bytes(R.randrange(256) for _ in range(64))).decode()),
    ("azure-conn", "Endpoint=sb://ns{n}.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={v}", lambda: base64.b64encode(bytes(R.randrange(256) for _ in range(32))).decode()),
    ("bearer", "Authorization: Bearer {v}", lambda: b62(40)),
    ("bearer", "curl -H \"Authorization: Bearer {v}\" https://api.internal.example/v2/jobs", lambda: rnd(32, AL + '-_.')),
    ("bearer", "2026-11-30T10:22:01Z DEBUG http: > authorization: Bearer {v}", lambda: b62(48)),
    ("bearer", "headers = {{'Authorization': 'Bearer {v}'}}", lambda: b62(36)),
    ("bearer", "fetch(url, {{ headers: {{ Authorization: `Bearer {v}` }} }})", lambda: b62(32)),
    ("basic", "Authorization: Basic {v}", lambda: base64.b64encode(f"svc-{rnd(4)}:{password()}".encode()).decode()),
    ("api-key-hex", "API_KEY={v}", lambda: hexs(32)),
    ("api-key-hex", "api_key: \"{v}\"", lambda: hexs(32)),
    ("api-key-hex", "const apiKey = '{v}';", lambda: hexs(32)),
    ("api-key-hex", "MAILGUN_API_KEY=key-{v}", lambda: hexs(32)),
    ("api-key-hex", "  \"x-api-key\": \"{v}\",", lambda: hexs(40)),
    ("api-key-hex", "DATADOG_API_KEY={v}", lambda: hexs(32)),
    ("api-key-hex", "client = Client(api_key=\"{v}\")", lambda: hexs(32)),
    ("api-key", "STRIPE_WEBHOOK_SECRET=\"whsec_{v}\"", lambda: b62(32)),
    ("api-key", "SECRET_KEY = '{v}'", lambda: rnd(50, AL + '!@#%^&*(-_=+)')),
    ("api-key", "client_secret: {v}", lambda: b62(34)),
    ("api-key", "spring.datasource.password={v}", password),
    ("api-key", "<add key=\"ApiKey\" value=\"{v}\" />", lambda: b62(32)),
    ("api-key", "- name: API_TOKEN\n  value: \"{v}\"", lambda: b62(40)),
    ("api-key", "ENV SERVICE_TOKEN={v}", lambda: b62(40)),
    ("api-key", "ARG NPM_AUTH_TOKEN={v}", lambda: b62(36)),
    ("api-key", "variable \"db_password\" {{\n  default = \"{v}\"\n}}", password),
    ("api-key", "token := \"{v}\"", lambda: b62(40)),
    ("api-key", "private static final String API_SECRET = \"{v}\";", lambda: b62(32)),
    ("api-key", "config.auth_token = '{v}'", lambda: b62(32)),
    ("api-key", "https://api.example.com/v1/items?access_token={v}&limit=10", lambda: b62(40)),
    ("password", "DB_PASSWORD={v}", password),
    ("password", "password: \"{v}\"", password),
    ("password", "  \"password\": \"{v}\",", password),
    ("password", "PGPASSWORD='{v}' psql -h db -U app", password),
    ("password", "mysql -u root -p{v} production", password),
    ("password", "conn = psycopg2.connect(host='db', user='app', password='{v}')", password),
    ("password", "Server=tcp:sql{n}.database.windows.net,1433;User ID=app;Password={v};Encrypt=true;", password),
    ("password", "smtp_pass = \"{v}\"", password),
    ("password", "<password>{v}</password>", password),
    ("password", "redis-cli -h cache -a {v} ping", password),
    ("password", "docker login -u ci -p {v} registry.example.com", password),
    ("password", "machine api.example.com login deploy password {v}", password),
    ("password", "ADMIN_PASSWORD={v}", lambda: rnd(14, string.ascii_lowercase + string.digits)),
    ("api-key", "API_TOKEN: str = \"{v}\"", lambda: b62(40)),
    ("api-key", "const apiKey: string = '{v}';", lambda: b62(32)),
    ("api-key", "var apiSecret string = \"{v}\"", lambda: b62(32)),
    ("api-key-hex", "WEATHER_KEY={v}", lambda: hexs(32)),
    ("api-key-hex", "mapsKey: '{v}'", lambda: hexs(32)),
    ("aws-secret", "aws configure set aws_secret_access_key {v}", aws_secret),
    ("api-key", "https://stor{n}.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-12-31T00:00:00Z&sig={v}", lambda: b62(43) + "%3D"),
    ("password", "kubectl create secret generic db --from-literal=password={v}", password),
    ("url", "DATABASE_URL=postgres://app:{v}@db.internal:5432/app", lambda: b62(20)),
    ("url", "mongodb+srv://admin:{v}@cluster0.x{n}.mongodb.net/prod", lambda: b62(16)),
    ("url", "REDIS_URL=redis://:{v}@cache:6379/0", lambda: b62(24)),
    ("url", "amqp://worker:{v}@mq:5672/vhost", lambda: b62(18)),
    ("url", "jdbc:mysql://db:3306/app?user=app&password={v}", password),
    ("k8s", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\ntype: Opaque\ndata:\n  api-token: {v}\n", lambda: base64.b64encode(b62(32).encode()).decode()),
    ("k8s", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: {v}\n", lambda: base64.b64encode(password().encode()).decode()),
]

FRAMES = [
    ("env", "{s}"),
    ("diff", "diff --git a/.env b/.env\n--- a/.env\n+++ b/.env\n@@ -1,2 +1,3 @@\n MODE=prod\n+{s}\n"),
    ("markdown", "## Setup\n\n```\n{s}\n```\n"),
    ("log", "[2026-11-30 10:22:01] INFO starting worker\n[2026-11-30 10:22:01] DEBUG config: {s}\n"),
    ("toolcall", None),  # JSON-encoded inside a tool call
]

def frame(text):
    name, tpl = R.choice(FRAMES)
    if name == "toolcall":
        return name, json.dumps({"tool_name": "Write", "tool_input": {"file_path": "/w/app/.env", "content": text + "\n"}})
    if name == "diff":
        # every line of a planted block is an added line
        return name, tpl.format(s=text.replace("\n", "\n+"))
    return name, tpl.format(s=text)

TOKEN_TEMPLATES = [
    "GITHUB_TOKEN={v}", "token: {v}", '"apiKey": "{v}"', "export KEY={v}", "auth = '{v}'",
    "curl -H 'X-Token: {v}' https://example.com", "const t = \"{v}\";", "  - {v}", "value={v}",
    "# rotate {v} before friday", "client.login(\"{v}\")",
]

planted = []
for kind, gen in TOKENS:
    for _ in range(8):
        v = gen()
        tpl = R.choice(TOKEN_TEMPLATES)
        f, text = frame(tpl.format(v=v))
        planted.append((kind, f, v, text))
for kind, tpl, gen in CONTEXT:
    for _ in range(4):
        v = gen()
        text = tpl.format(v=v, n=R.randint(1, 99), id=aws_id()[4:])
        f, text = frame(text)
        planted.append((kind, f, v, text))
for kind in ["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"]:
    for _ in range(3):
        k = pem(kind)
        f, text = frame(k)
        planted.append(("private-key", f, k.split("\n")[1], text))

decoys = []
def d(kind, text): decoys.append((kind, text))
for _ in range(6):
    d("git-sha", f"commit {hexs(40)}\nAuthor: Dev <dev@example.com>\n\n    fix: handle empty input")
    d("git-sha", f"git checkout {hexs(40)}")
    d("lockfile", f'"node_modules/lodash": {{\n  "version": "4.17.21",\n  "resolved": "https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz",\n  "integrity": "sha512-{base64.b64encode(bytes(R.randrange(256) for _ in range(64))).decode()}"\n}}')
    d("cargo-lock", f'[[package]]\nname = "serde"\nversion = "1.0.200"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "{hexs(64)}"')
    d("go-sum", f"github.com/pkg/errors v0.9.1 h1:{base64.b64encode(bytes(R.randrange(256) for _ in range(32))).decode()}")
    d("uuid", f'{{"request_id": "{hexs(8)}-{hexs(4)}-4{hexs(3)}-a{hexs(3)}-{hexs(12)}", "status": "ok"}}')
    d("uuid", f"id: {hexs(8)}-{hexs(4)}-{hexs(4)}-{hexs(4)}-{hexs(12)}")
    d("hash", f"sha256sum: {hexs(64)}  dist/app.tar.gz")
    d("hash", f'checksum = "{hexs(40)}"')
    d("hash", f"md5: {hexs(32)}")
    d("digest", f"image: ghcr.io/acme/api@sha256:{hexs(64)}")
    d("asset", f'<script src="/static/js/main.{hexs(8)}.js" integrity="sha384-{base64.b64encode(bytes(R.randrange(256) for _ in range(48))).decode()}"></script>')
    d("asset", f"app-{hexs(20)}.css")
    d("base64-image", f'<img src="data:image/png;base64,{base64.b64encode(bytes(R.randrange(256) for _ in range(120))).decode()}">')
    d("etag", f'ETag: "{hexs(32)}"')
    d("trace", f"trace_id={hexs(32)} span_id={hexs(16)}")
    d("ssh-public", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{rnd(43)} dev@laptop")
    d("objectid", f'{{"_id": {{"$oid": "{hexs(24)}"}}}}')
d("docs-example", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE")
d("docs-example", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
d("docs-example", "export GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
d("docs-example", "API_KEY=your-api-key-here")
d("docs-example", "password: <your-password>")
d("docs-example", "DB_PASSWORD=${DB_PASSWORD}")
d("docs-example", "token: {{ .Values.token }}")
d("docs-example", "Authorization: Bearer <token>")
d("docs-example", "Authorization: Bearer $API_TOKEN")
d("placeholder", "SECRET_KEY=changeme")
d("code", "password = getpass.getpass()")
d("code", "const token = await getToken(client);")
d("code", "api_key = os.environ.get('API_KEY')")
d("code", "if (password.length < 12) throw new Error('too short');")
d("code", "self.secret_key = settings.SECRET_KEY")
d("code", "max_tokens: 4096")
d("cert", "-----BEGIN CERTIFICATE-----\n" + base64.b64encode(bytes(R.randrange(256) for _ in range(120))).decode() + "\n-----END CERTIFICATE-----")

def esc(t): return t.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
with open("planted.tsv", "w") as f:
    f.write("# kind\tframe\tsecret (must be found: a finding covers part of it)\ttext (escaped: \\n \\t \\\\)\n")
    for k, fr, v, t in planted: f.write(f"{k}\t{fr}\t{esc(v)}\t{esc(t)}\n")
with open("decoys.tsv", "w") as f:
    f.write("# kind\ttext (escaped: \\n \\t \\\\); nothing may be found\n")
    for k, t in decoys: f.write(f"{k}\t{esc(t)}\n")
print(len(planted), "planted,", len(decoys), "decoys")
