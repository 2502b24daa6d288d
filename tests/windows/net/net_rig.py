#!/usr/bin/env python3
"""The Linux side of the Windows network tests (ctest win.net; tests/windows/net/test_net_win.cpp).

Starts, on 127.0.0.1 only: an https origin whose certificate a private CA signed (made here with
the openssl CLI), a plain http origin, a CONNECT proxy that demands Basic (wf:secret) and one that
does not, and, where its tools are installed, the Kerberos rig of tests/support/net/kerberos_rig.cpp
(an MIT KDC with the realm TEST.LOCAL and squid demanding Negotiate, alice's ticket from kinit).
Then runs the command after "--" (the test executable under wine) with WHEELFIT_NET_* variables
naming them, the proxy variables unset, and KRB5_CONFIG / KRB5CCNAME pointing into the rig (wine's
Kerberos package uses the host's MIT libraries, which read them). Everything it started is stopped
and its folder removed when the command ends; the exit status is the command's.
"""
import base64
import http.server
import os
import shutil
import socket
import socketserver
import ssl
import subprocess
import sys
import tempfile
import threading
import time

SQUID_HELPER = "/usr/lib/squid/negotiate_kerberos_auth"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(cmd, log, env=None):
    with open(log, "a") as out:
        subprocess.run(cmd, shell=True, check=True, stdout=out, stderr=subprocess.STDOUT, env=env)


def make_certs(d):
    """ca.pem / ca.key, origin.pem / origin.key (SAN 127.0.0.1, localhost), other-ca.pem."""
    log = os.path.join(d, "openssl.log")
    for name, cn in (("ca", "wheelfit winnet test CA"), ("other-ca", "wheelfit unrelated CA")):
        run(f"openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj '/CN={cn}' -keyout {d}/{name}.key -out {d}/{name}.pem "
            "-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign", log)
    run(f"openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout {d}/origin.key -out {d}/origin.csr", log)
    with open(f"{d}/origin.ext", "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    run(f"openssl x509 -req -in {d}/origin.csr -CA {d}/ca.pem -CAkey {d}/ca.key -CAcreateserial -days 2 "
        f"-extfile {d}/origin.ext -out {d}/origin.pem", log)


class Origin(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        body = b"hello from linux\n" if self.path == "/ok" else b"not here\n"
        self.send_response(200 if self.path == "/ok" else 404)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


class Proxy(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, log, credential):
        self.log, self.credential = log, credential
        super().__init__(("127.0.0.1", 0), ProxyHandler)


class ProxyHandler(socketserver.BaseRequestHandler):
    """CONNECT only: 407 without the credential (when one is asked), else a tunnel."""

    def handle(self):
        c = self.request
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = c.recv(4096)
            if not chunk:
                return
            head += chunk
        lines = head.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
        method, target = lines[0].split(" ")[:2]
        auth = ""
        for line in lines[1:]:
            k, _, v = line.partition(":")
            if k.strip().lower() == "proxy-authorization":
                auth = v.strip()
        want = self.server.credential
        ok = want is None or auth == "Basic " + base64.b64encode(want.encode()).decode()
        with open(self.server.log, "a") as f:
            f.write(f"{method} {target} {'ok' if ok else '407'} auth={auth.split(' ')[0] or '-'}\n")
        if method != "CONNECT":
            c.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        if not ok:
            c.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"winnet\"\r\n"
                      b"Content-Length: 0\r\nConnection: close\r\n\r\n")
            return
        host, _, port = target.rpartition(":")
        up = socket.create_connection((host, int(port)), timeout=30)
        c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")

        def pump(a, b):
            try:
                while True:
                    data = a.recv(65536)
                    if not data:
                        break
                    b.sendall(data)
            except OSError:
                pass
            finally:
                for s in (a, b):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

        t = threading.Thread(target=pump, args=(up, c), daemon=True)
        t.start()
        pump(c, up)
        t.join(30)
        up.close()


def start(server):
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def kerberos_missing():
    for tool in ("krb5kdc", "kdb5_util", "kadmin.local", "kinit", "squid"):
        if not shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin"):
            return tool
    if not os.access(SQUID_HELPER, os.X_OK):
        return SQUID_HELPER
    return None


def wait_port(port, proc, name, log):
    until = time.time() + 30
    while time.time() < until:
        if proc.poll() is not None:
            break
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"{name} did not start listening; see {log}")


def kerberos_rig(d, procs):
    """The rig of tests/support/net/kerberos_rig.cpp (same realm, principals and squid set-up)."""
    os.makedirs(d)
    for folder in (os.path.dirname(d), d):  # squid started as root runs as `proxy`: it must reach the keytab
        os.chmod(folder, 0o711)
    kdc, sq = os.path.join(d, "kdc"), os.path.join(d, "squid")
    os.makedirs(kdc)
    os.makedirs(sq)
    kdc_port, proxy_port = free_port(), free_port()
    kp = f"127.0.0.1:{kdc_port}"
    with open(f"{d}/krb5.conf", "w") as f:
        f.write("[libdefaults]\n    default_realm = TEST.LOCAL\n    dns_lookup_realm = false\n    dns_lookup_kdc = false\n"
                "    dns_canonicalize_hostname = false\n    rdns = false\n    udp_preference_limit = 1\n"
                f"[realms]\n    TEST.LOCAL = {{\n        kdc = {kp}\n    }}\n[domain_realm]\n    localhost = TEST.LOCAL\n")
    with open(f"{d}/kdc.conf", "w") as f:
        f.write(f"[kdcdefaults]\n    kdc_listen = {kp}\n    kdc_tcp_listen = {kp}\n[realms]\n    TEST.LOCAL = {{\n"
                f"        kdc_listen = {kp}\n        kdc_tcp_listen = {kp}\n        database_name = {kdc}/principal\n"
                f"        key_stash_file = {kdc}/stash\n        acl_file = {kdc}/kadm5.acl\n    }}\n"
                f"[logging]\n    kdc = FILE:{kdc}/kdc.log\n")
    env = dict(os.environ, KRB5_CONFIG=f"{d}/krb5.conf", KRB5_KDC_PROFILE=f"{d}/kdc.conf",
               KRB5CCNAME=f"FILE:{d}/alice.cc", KRB5_CLIENT_KTNAME=f"{d}/no-client.keytab",
               PATH=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
    log = f"{d}/setup.log"
    run("kdb5_util create -s -r TEST.LOCAL -P wheelfit-test-master", log, env)
    run("kadmin.local -r TEST.LOCAL -q 'addprinc -randkey HTTP/localhost'", log, env)
    run(f"kadmin.local -r TEST.LOCAL -q 'ktadd -k {d}/http.keytab HTTP/localhost'", log, env)
    run("kadmin.local -r TEST.LOCAL -q 'addprinc -randkey alice'", log, env)
    run(f"kadmin.local -r TEST.LOCAL -q 'ktadd -k {d}/alice.keytab alice'", log, env)
    if os.geteuid() == 0:
        import pwd
        try:
            p = pwd.getpwnam("proxy")
            for path in (sq, f"{d}/http.keytab"):
                os.chown(path, p.pw_uid, p.pw_gid)
        except KeyError:
            pass
    with open(f"{d}/squid.conf", "w") as f:
        f.write(f"http_port 127.0.0.1:{proxy_port}\npid_filename {sq}/squid.pid\ncache_log {sq}/cache.log\n"
                "logformat wf %ts.%03tu %>a %Ss/%03>Hs %rm %ru %un \"%{User-Agent}>h\"\n"
                f"access_log stdio:{sq}/access.log wf\ncoredump_dir {sq}\nnetdb_filename none\npinger_enable off\n"
                "udp_incoming_address 127.0.0.1\nudp_outgoing_address 127.0.0.1\ndns_nameservers 127.0.0.1\n"
                f"shutdown_lifetime 0 seconds\nauth_param negotiate program {SQUID_HELPER} -k {d}/http.keytab "
                f"-s HTTP/localhost@TEST.LOCAL -c {sq}\nauth_param negotiate children 4 startup=1 idle=1\n"
                "auth_param negotiate keep_alive on\nacl auth proxy_auth REQUIRED\nhttp_access allow auth\n"
                "http_access deny all\n")
    for argv, port, name, out in ((["krb5kdc", "-n", "-r", "TEST.LOCAL", "-P", f"{kdc}/kdc.pid"], kdc_port, "krb5kdc",
                                   f"{kdc}/stdout.log"),
                                  (["squid", "-N", "-f", f"{d}/squid.conf"], proxy_port, "squid", f"{sq}/stdout.log")):
        with open(out, "a") as o:
            procs.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=o, stderr=subprocess.STDOUT, env=env))
        wait_port(port, procs[-1], name, out)
    run(f"kinit -k -t {d}/alice.keytab alice@TEST.LOCAL", log, env)
    return {k: env[k] for k in ("KRB5_CONFIG", "KRB5CCNAME", "KRB5_CLIENT_KTNAME")}, proxy_port, f"{sq}/access.log"


def main():
    if "--" not in sys.argv:
        sys.exit("usage: net_rig.py -- COMMAND...")
    command = sys.argv[sys.argv.index("--") + 1:]
    d = tempfile.mkdtemp(prefix="wheelfit-winnet-")
    procs = []
    try:
        make_certs(d)
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(f"{d}/origin.pem", f"{d}/origin.key")
        https = start(Server(("127.0.0.1", 0), Origin))
        https.socket = tls.wrap_socket(https.socket, server_side=True)
        plain = start(Server(("127.0.0.1", 0), Origin))
        basic = start(Proxy(f"{d}/basic-proxy.log", "wf:secret"))
        open_proxy = start(Proxy(f"{d}/open-proxy.log", None))
        env = {k: v for k, v in os.environ.items()
               if k.lower() not in ("http_proxy", "https_proxy", "all_proxy", "no_proxy")}
        env.update(WHEELFIT_NET_DIR=d, WHEELFIT_NET_HTTPS=f"https://127.0.0.1:{https.server_address[1]}",
                   WHEELFIT_NET_HTTP=f"http://127.0.0.1:{plain.server_address[1]}",
                   WHEELFIT_NET_BASIC_PROXY=f"127.0.0.1:{basic.server_address[1]}",
                   WHEELFIT_NET_OPEN_PROXY=f"127.0.0.1:{open_proxy.server_address[1]}")
        missing = kerberos_missing()
        if missing:
            print(f"win.net: the Kerberos case is skipped: {missing} is not installed "
                  "(scripts/install-deps.sh installs krb5-kdc, krb5-admin-server, krb5-user, squid)", flush=True)
        else:
            krb_env, squid_port, access_log = kerberos_rig(os.path.join(d, "krb"), procs)
            env.update(krb_env)
            env.update(WHEELFIT_NET_KRB_PROXY=f"http://localhost:{squid_port}", WHEELFIT_NET_KRB_LOG=access_log)
        return subprocess.run(command, env=env).returncode
    finally:
        for p in reversed(procs):
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
