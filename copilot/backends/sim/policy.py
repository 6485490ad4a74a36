"""What a candidate's source may contain: refused before the compiler sees it (id SEC.SOURCE).

A kernel is device code plus a host TilingFunc; neither needs the operating system, the
emulator's internals or code that runs before main. The scan works on the candidate's own tokens
(comments blanked, line splices joined) and refuses:
- an `#include` outside the headers kernels use (a root-only file, /dev/zero, a local header);
- token pasting (`##`), universal character names and digraph/`%:` directives, the ways to build
  an identifier the scan would not see;
- the emulator's internal namespaces (`cannsim`, its cost timeline, diagnostics writer, block
  begin/end) and the launcher's;
- inline assembly, and attributes that run or place code outside the kernel (constructor,
  destructor, section, init_priority, alias, ifunc, ...);
- operating-system, process, file and loader functions (open, write, _exit, fork, syscall,
  mmap, dlopen, getenv, ...), identifiers reserved to the implementation (`__x`, except the
  AscendC qualifiers and `__builtin_` math), and a `main`;
- string literals naming filesystem paths (`/proc`, `/dev`, ...).
The names are refused as identifiers, not only as calls: a function pointer or a `using` would
otherwise reach them. The runtime layers (seccomp, namespaces, limits) stay in place behind it.
"""

from __future__ import annotations

import re

from copilot.diagnostics import Diagnostic

ID = "SEC.SOURCE"
HINT = ("a kernel uses the AscendC API only: no system calls, files, processes, emulator internals or "
        "code outside the kernel entry and TilingFunc")

ALLOWED_INCLUDES = {
    "kernel_operator.h", "tiling/platform/platform_ascendc.h", "register/op_def_registry.h",
    "register/tilingdata_base.h", "lib/matmul_intf.h", "tiling/tiling_api.h",
    "cstdint", "cstddef", "cmath", "cstring", "climits", "cfloat", "type_traits", "algorithm", "limits",
    "utility", "array", "vector", "string", "map", "iterator", "numeric", "tuple", "initializer_list",
    "functional", "memory", "stdint.h", "math.h", "float.h", "limits.h", "cstdio",
    "charconv",   # host code recovering a float attr's decimal (knowledge card L3.attr-constants)
}

# Namespaces and symbols of the emulator and launcher (any mention is refused).
INTERNAL = {"cannsim", "cannsim_glue", "cannsim_h", "cannsim_pch",
            "sim_data", "sim_init"}   # emulator-side members (sim_data: UB by its host address, uncharged)

# Operating-system, process, file, loader and control-transfer names.
SYSTEM = {
    "open", "openat", "openat2", "creat", "close", "pread", "pwrite", "readv", "writev",
    "lseek", "dup", "dup2", "dup3", "pipe2", "fcntl", "ioctl", "mmap", "munmap", "mremap",
    "mprotect", "madvise", "brk", "sbrk", "pkey_set", "pkey_get", "pkey_alloc", "pkey_free", "pkey_mprotect",
    "mincore", "msync", "mlock", "munlock", "process_madvise", "userfaultfd", "shmat", "shmget", "truncate", "ftruncate", "unlink", "unlinkat", "rename",
    "renameat", "link", "symlink", "symlinkat", "mkfifo", "mknod", "chmod", "fchmod", "chown", "fchown",
    "mkdir", "rmdir", "chdir", "fchdir", "chroot", "mount", "umount", "opendir", "readdir",
    "fopen", "fdopen", "freopen", "fwrite", "fread", "fputs", "fgets", "fclose", "fflush", "remove",
    "tmpfile", "tmpnam", "mkstemp", "popen", "pclose", "system", "FILE",
    "ofstream", "ifstream", "fstream", "filebuf", "basic_filebuf", "basic_ofstream", "basic_ifstream",
    "filesystem",
    "exit", "_exit", "_Exit", "quick_exit", "at_quick_exit", "atexit", "abort", "terminate",
    "set_terminate", "set_new_handler", "longjmp", "setjmp", "siglongjmp", "sigsetjmp",
    "fork", "vfork", "clone", "clone3", "execl", "execlp", "execle", "execv", "execve", "execvp",
    "execvpe", "fexecve", "posix_spawn", "posix_spawnp", "wait", "waitpid", "waitid", "kill", "tgkill",
    "raise", "signal", "sigaction", "sigprocmask", "alarm", "setitimer", "pause", "sleep", "usleep",
    "nanosleep", "syscall", "prctl", "ptrace", "setrlimit", "prlimit", "getrlimit", "setuid", "setgid",
    "setsid", "setpgid", "unshare", "setns", "personality",
    "socket", "connect", "bind", "listen", "accept", "send", "sendto", "recv", "recvfrom",
    "dlopen", "dlsym", "dlclose", "dlvsym", "dladdr", "getenv", "secure_getenv", "setenv", "putenv",
    "environ", "__environ", "thread", "jthread", "pthread_create", "async",
    "main",
}

# Also common variable names (`TPipe pipe`, `uint32_t read`): allowed as a member (`x.read`), in a
# declaration, and where a variable of that name declared earlier is in scope; refused otherwise
# (a call, `&read` or `= write` with no such variable in scope names the system function).
OBJECT_NAMES = {"pipe", "read", "write"}
_NOT_A_TYPE = {"return", "case", "else", "throw", "new", "delete", "sizeof", "co_return", "co_yield", "goto",
               "typedef", "using", "not", "and", "or", "operator", "do", "alignof", "decltype", "typeid"}

# Implementation-reserved identifiers a kernel may use.
RESERVED_OK = {"__aicore__", "__global__", "__gm__", "__ubuf__", "__inline__", "__restrict__", "__restrict",
               "__vector__", "__cube__", "__NPU_ARCH__", "__CCE_AICORE__", "__LINE__", "__FILE__",
               "__func__", "__cplusplus", "__fp16", "__bf16"}
RESERVED_PREFIX_OK = ("__builtin_nan", "__builtin_inf", "__builtin_huge_val", "__builtin_expect",
                      "__builtin_fabs", "__builtin_sqrt", "__builtin_ctz", "__builtin_clz",
                      "__builtin_popcount", "__builtin_memcpy", "__builtin_memset", "__DAV_")

ASM = {"asm", "__asm", "__asm__"}
BAD_ATTRIBUTES = {"constructor", "destructor", "section", "init_priority", "alias", "ifunc", "weakref",
                  "visibility", "naked", "used", "retain", "externally_visible", "symver", "cleanup",
                  "__constructor__", "__destructor__", "__section__", "__init_priority__", "__alias__",
                  "__ifunc__", "__visibility__", "__naked__", "__used__", "__cleanup__"}

_LEX = re.compile(r'//[^\n]*|/\*[\s\S]*?(?:\*/|\Z)|R"(?P<delim>[^()\\\s]{0,16})\((?P<raw>[\s\S]*?)\)(?P=delim)"'
                  r'|"(?P<str>(?:\\.|[^"\\\n])*)"?|\'(?:\\.|[^\'\\\n])*\'?')
_IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*(.*)$", re.M)
_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(\w+)", re.M)
_PATHISH = re.compile(r"(?:^|[^A-Za-z0-9])/(?:proc|dev|sys|etc|root|home|tmp|var|run|usr|bin|lib|work|opt|mnt)\b"
                      r"|\.\./|^/")


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _blank_keep_lines(s: str) -> str:
    return re.sub(r"[^\n]", " ", s)


def _matching(code: str, opens: str, closes: str) -> dict[int, int]:
    """Position of each opening bracket -> position of its closing one (the end for an unclosed one)."""
    out, stack = {}, []
    for i, ch in enumerate(code):
        if ch == opens:
            stack.append(i)
        elif ch == closes and stack:
            out[stack.pop()] = i
    for i in stack:
        out[i] = len(code)
    return out


class _ObjectNames:
    """Where a variable named like a system function (OBJECT_NAMES) is in scope, lexically: from its
    declaration to the end of the enclosing brace block (a class body: the whole body); a parameter or
    a for-loop variable: to the end of the block or statement after the parentheses."""

    def __init__(self, code: str):
        self.code = code
        self.braces = _matching(code, "{", "}")
        self.parens = _matching(code, "(", ")")
        self.scopes: dict[str, list[tuple[int, int]]] = {}
        for m in re.finditer(r"\b(?:" + "|".join(sorted(OBJECT_NAMES)) + r")\b", code):
            if self._declares(m.start(), m.end()) and not code[m.end():].lstrip().startswith("("):
                self.scopes.setdefault(m.group(0), []).append(self._scope(m.start()))

    def _declares(self, start: int, end: int) -> bool:
        before = self.code[max(0, start - 60):start]
        t = re.search(r"([A-Za-z0-9_]+|>)\s*[*&]*\s*$", before)
        return bool(t) and t.group(1) not in _NOT_A_TYPE and not re.search(r"(?:\.|->|::)\s*$", before)

    def _enclosing(self, pos: int, table: dict[int, int]) -> tuple[int, int] | None:
        best = None
        for o, c in table.items():
            if o < pos < c and (best is None or o > best[0]):
                best = (o, c)
        return best

    def _scope(self, pos: int) -> tuple[int, int]:
        brace = self._enclosing(pos, self.braces)
        paren = self._enclosing(pos, self.parens)
        if paren and (brace is None or paren[0] > brace[0]):
            rest = self.code[paren[1] + 1:]
            head = re.match(r"(?:\s|\b(?:const|noexcept|override|final|mutable|volatile)\b)*", rest).end()
            if rest[head:head + 1] in ("{", ":"):
                body = self.code.find("{", paren[1] + 1 + head)
                if body >= 0:
                    return pos, self.braces.get(body, len(self.code))
            stop = re.search(r"[;}]", rest)
            return pos, paren[1] + 1 + (stop.start() if stop else len(rest))
        if brace is None:
            return pos, len(self.code)
        head = self.code[max(0, brace[0] - 200):brace[0]]
        if re.search(r"\b(?:class|struct|union)\s+[A-Za-z_]\w*[^;{}()]*$", head):
            return brace[0], brace[1]   # a member: in scope in the whole body
        return pos, brace[1]

    def allowed(self, start: int, end: int) -> bool:
        before = self.code[max(0, start - 60):start]
        if re.search(r"(?:\.|->)\s*$", before):
            return True                                   # a member of an object
        if self._declares(start, end):
            return True                                   # a declaration (a function's: calls stay refused)
        after = self.code[end:].lstrip()
        if after.startswith((".", "->", "[")):
            return True                                   # used as an object (a function has no members)
        if after.startswith("("):
            return False                                  # a call of the system function
        name = self.code[start:end]
        return any(lo <= start <= hi for lo, hi in self.scopes.get(name, []))


def scan(source: str) -> list[Diagnostic]:
    """The SEC.SOURCE findings of a candidate's text (empty when it may be compiled)."""
    found: list[Diagnostic] = []

    def refuse(line: int, what: str) -> None:
        if len(found) < 20:
            found.append(Diagnostic(ID, "error", f"{what}: refused before compiling", line, HINT))

    # Line splices join lines as the compiler does (a name may be split across them); findings
    # after a splice are reported on its first line.
    source = re.sub(r"\\[ \t]*\n", "", source)
    if "??=" in source or "??/" in source:
        refuse(_line(source, source.find("??")), "trigraphs")

    strings: list[tuple[int, str]] = []

    def blank(m: re.Match) -> str:
        text = m.group(0)
        if text.startswith("//") or text.startswith("/*"):
            return _blank_keep_lines(text)
        body = m.group("raw") if m.group("raw") is not None else m.group("str")
        if body is not None:
            strings.append((m.start(), body))
        return '"' + _blank_keep_lines(text[1:-1]) + '"' if len(text) >= 2 else _blank_keep_lines(text)

    # Include targets are read before strings are blanked.
    for m in _INCLUDE.finditer(re.sub(r"//[^\n]*|/\*[\s\S]*?(?:\*/|\Z)", lambda x: _blank_keep_lines(x.group(0)), source)):
        target = m.group(1).strip()
        inc = re.match(r'^[<"]([^>"]+)[>"]', target)
        if not inc:
            refuse(_line(source, m.start()), f"#include of a computed name ({target[:60]})")
        elif inc.group(1) not in ALLOWED_INCLUDES:
            refuse(_line(source, m.start()), f"#include of '{inc.group(1)[:80]}' (kernels include only the AscendC "
                                             "headers and a few standard ones)")
    code = _LEX.sub(blank, source)
    for pos, body in strings:
        if _PATHISH.search(body):
            refuse(_line(source, pos), f"a string naming a filesystem path ('{body[:40]}')")
    for m in _DIRECTIVE.finditer(code):
        if m.group(1) in ("pragma", "line", "embed", "include_next", "import"):
            if m.group(1) == "pragma" and re.match(r"[ \t]*#[ \t]*pragma[ \t]+once\b", code[m.start():m.start() + 40]):
                continue
            refuse(_line(code, m.start()), f"the #{m.group(1)} directive")
    if "##" in code or re.search(r"%:|<%|%>|<:", code.replace("<::", "")):
        pos = code.find("##") if "##" in code else re.search(r"%:|<%|%>|<:", code.replace("<::", "")).start()
        refuse(_line(code, pos), "token pasting or digraphs (they build names the scan cannot see)")
    if re.search(r"\\[uU][0-9A-Fa-f]", code):
        refuse(_line(code, re.search(r"\\[uU][0-9A-Fa-f]", code).start()), "universal character names in code")
    if "_Pragma" in code:
        refuse(_line(code, code.find("_Pragma")), "_Pragma")
    objects = _ObjectNames(code)
    for m in _IDENT.finditer(code):
        name = m.group(0)
        line = _line(code, m.start())
        if name in INTERNAL or name.startswith("cannsim"):
            refuse(line, f"a reference to the emulator's internals ('{name}')")
        elif name in ASM:
            refuse(line, "inline assembly")
        elif name in OBJECT_NAMES:
            if not objects.allowed(m.start(), m.end()):
                refuse(line, f"the system/process/file name '{name}'")
        elif name in SYSTEM:
            refuse(line, f"the system/process/file name '{name}'")
        elif name in ("__attribute__", "__attribute", "__declspec"):
            tail = code[m.end():m.end() + 200].split("))")[0]
            bad = next((a for a in _IDENT.findall(tail) if a in BAD_ATTRIBUTES), None)
            if bad:
                refuse(line, f"the attribute '{bad}' (code or data outside the kernel)")
        elif name.startswith("__") and name not in RESERVED_OK and not name.startswith(RESERVED_PREFIX_OK):
            refuse(line, f"the implementation-reserved name '{name}'")
    for m in re.finditer(r"\[\[([^\]]*)\]\]", code):
        if any(a in BAD_ATTRIBUTES for a in _IDENT.findall(m.group(1))):
            refuse(_line(code, m.start()), "a [[gnu::...]] attribute that places or runs code outside the kernel")
    # One finding per (line, message).
    seen, out = set(), []
    for d in found:
        if (d.line, d.message) not in seen:
            seen.add((d.line, d.message))
            out.append(d)
    return out
