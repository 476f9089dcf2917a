#!/usr/bin/env python3
# Which parts of the node executable a process keeps resident: its pages of the binary's mappings
# that are present (/proc/PID/pagemap, bit 63), attributed to ELF sections (readelf -S) and, for
# .text and .rodata, to families of symbols (nm -n -C: V8's compilers, ICU, OpenSSL, ...). The
# binary is not position-independent, so a mapped address is the symbol's address. Root reads
# pagemap of any process; `nm` of the 150 MB binary takes a while and is cached by build id.
#
#   python3 bench/probes/node-pages.py PID [--top] [--pages=FILE]   (or bench/probes/mem-probe.ts --diag --pagemap bench/probes/node-pages.py)
# --top lists the symbols most resident pages start in; --pages writes the resident page addresses.
import sys, os, struct, re, bisect, subprocess
from collections import defaultdict
args = [a for a in sys.argv[1:] if not a.startswith('--')]
pid = int(args[0])
binpath = os.path.realpath(f'/proc/{pid}/exe')
build_id = re.search(r'Build ID: ([0-9a-f]+)', subprocess.run(['readelf', '-n', '-W', binpath], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout)
nmfile = os.path.join(os.path.expanduser('~/.cache/csi-resizer'), f"nm-{build_id.group(1) if build_id else os.path.basename(binpath)}.txt")
if not os.path.exists(nmfile):
  os.makedirs(os.path.dirname(nmfile), exist_ok=True)
  with open(nmfile + '.tmp', 'w') as out:
    subprocess.run(['nm', '-n', '--defined-only', '-C', binpath], stdout=out, stderr=subprocess.DEVNULL, check=True)
  os.rename(nmfile + '.tmp', nmfile)
PAGE = 4096
maps = []
for l in open(f'/proc/{pid}/maps'):
  parts = l.split()
  if len(parts) >= 6 and os.path.realpath(parts[5]) == binpath:
    a, b = (int(x, 16) for x in parts[0].split('-')); maps.append((a, b, parts[1], int(parts[2], 16)))
resident = []
with open(f'/proc/{pid}/pagemap', 'rb') as pm:
  for a, b, perm, off in maps:
    pm.seek(a // PAGE * 8); data = pm.read((b - a) // PAGE * 8)
    for i in range((b - a) // PAGE):
      (e,) = struct.unpack_from('<Q', data, i * 8)
      if e >> 63 & 1: resident.append(a + i * PAGE)
for a in sys.argv:
  if a.startswith('--pages='):
    with open(a[len('--pages='):], 'w') as out: out.write('\n'.join(hex(p) for p in resident) + '\n')
# sections
secs = []
for l in subprocess.run(['readelf', '-S', '-W', binpath], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout.splitlines():
  m = re.match(r'\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)', l)
  if m and int(m.group(2), 16): secs.append((int(m.group(2), 16), int(m.group(2), 16) + int(m.group(3), 16), m.group(1)))
def section(addr):
  for a, b, n in secs:
    if a <= addr < b: return n
  return '(other)'
bysec = defaultdict(int)
for p in resident: bysec[section(p)] += 1
print(f'pid {pid}: {len(resident) * 4 // 1024} MiB of {binpath} resident')
for n, c in sorted(bysec.items(), key=lambda x: -x[1]): print(f'  {c * 4 / 1024:7.2f} MiB {n}')
# symbols
addrs = []; names = []
for l in open(nmfile):
  m = re.match(r'([0-9a-f]+) (\S) (.*)', l)
  if m: addrs.append(int(m.group(1), 16)); names.append(m.group(3))
def family(n):
  for pat, fam in [
    (r'^Builtins_', 'V8 embedded builtins'), (r'v8::internal::compiler::turboshaft', 'V8 Turboshaft'), (r'v8::internal::compiler::', 'V8 TurboFan (compiler::)'),
    (r'v8::internal::maglev', 'V8 Maglev'), (r'v8::internal::wasm|wasm::', 'V8 wasm'), (r'v8::internal::interpreter', 'V8 interpreter/bytecode'),
    (r'v8::internal::baseline', 'V8 Sparkplug'), (r'(v8::internal::)?(heap::|.*Heap|.*Scavenger|.*MarkCompact|.*Sweeper|.*Marking)', 'V8 heap/GC'),
    (r'v8::internal::(Parser|Scanner|PreParser|AstNode|.*Ast)', 'V8 parser'), (r'v8::internal::Runtime_', 'V8 runtime functions'), (r'^v8::|v8::internal', 'V8 other'),
    (r'icu_\d+::|^u(ucase|char|loc|res|data|str|set|text|norm|enum|hash|trie|prop|list)_|^icudt|^ures_|^ucol_|^ubrk_|_\d\d$', 'ICU'),
    (r'^nghttp2_', 'nghttp2'), (r'^ngtcp2|^nghttp3', 'QUIC'), (r'^uv_|^uv__', 'libuv'), (r'^llhttp|^llparse', 'llhttp'), (r'^ares_|^ares__', 'c-ares'),
    (r'^sqlite3', 'sqlite'), (r'simdjson', 'simdjson'), (r'^ada::|ada_', 'ada (URL)'), (r'Brotli|^brotli', 'brotli'), (r'^(deflate|inflate|crc32|adler32|zng_|Cr_z_)|zlib', 'zlib'),
    (r'^(EVP_|SSL_|ssl|tls|OPENSSL|ossl_|CRYPTO_|BN_|EC_|RSA_|ERR_|X509|ASN1|PEM_|BIO_|OBJ_|aesni|sha\d|SHA|AES_|gcm|ChaCha|Poly|HMAC|OSSL|i2d_|d2i_|PKCS|DH_|DSA_|ecp_|x25519|OPENSSL|bn_|ec_|rsa_|evp_|dtls|SRP|CMS_|OCSP|CT_|conf_|CONF_|ENGINE|RAND|rand_|UI_|DES_|md5|MD5)', 'OpenSSL'),
    (r'^node::crypto', 'node::crypto'), (r'^node::http2', 'node::http2'), (r'^node::', 'node other'), (r'^std::|^__gnu|^operator|^__cxa|^_Z', 'C++ std/runtime'),
  ]:
    if re.search(pat, n): return fam
  return 'other'
fam = defaultdict(int); top = defaultdict(int)
for p in resident:
  s = section(p)
  if s not in ('.text', '.rodata'): continue
  # symbols overlapping the page: attribute by the symbol at the page start and each one starting inside
  i = bisect.bisect_right(addrs, p) - 1
  seen = set()
  j = max(i, 0)
  while j < len(addrs) and addrs[j] < p + PAGE:
    seen.add(names[j]); j += 1
  if i >= 0: seen.add(names[i])
  fams = {family(n) for n in seen} or {'?'}
  for f in fams: fam[(s, f)] += 1 / len(fams)
  if i >= 0: top[names[i]] += 1
print('by symbol family (pages shared between families split evenly):')
for (s, f), c in sorted(fam.items(), key=lambda x: -x[1]):
  if c * 4 >= 64: print(f'  {c * 4 / 1024:7.2f} MiB {s} {f}')
if '--top' in sys.argv:
  print('the symbols most resident pages start in, per family:')
  byfam = defaultdict(list)
  for n, c in top.items(): byfam[family(n)].append((c, n))
  for f, lst in sorted(byfam.items(), key=lambda x: -sum(c for c, _ in x[1])):
    print(f'  {f}: {sum(c for c, _ in lst) * 4} KiB')
    for c, n in sorted(lst, reverse=True)[:8]: print(f'    {c * 4:6d} KiB {n[:140]}')
