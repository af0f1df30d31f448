#!/usr/bin/python3
"""Lints packaging/spack/packages/zeropp/package.py against the build (Spack
itself is not needed): every find_package in CMakeLists.txt, cmake/*.cmake and
tests/CMakeLists.txt has an entry in CMAKE_TO_SPACK and its Spack packages a
depends_on (with the spec and deptype the entry asks for), every depends_on is
the image of some find_package (or of a library in EXTRA), the recipe's CMake
switches exist in the build; a variant mapped to a CMake option
(define_from_variant) has the option's default, and a find_package inside
if(OPTION) (or in a file included there) has depends_on(..., when="+variant")
and only then; the recipe names no download URL (the project has none) and
README.md's Spack commands name the recipe's versions and variants; and the
Lmod and Tcl module templates set the same variables to the same
install-relative paths. Prints "spack lint: OK" or one line per problem and
exits 1."""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RECIPE = os.path.join(ROOT, "packaging/spack/packages/zeropp/package.py")
README = os.path.join(ROOT, "README.md")
# Variants the recipe inherits (CudaPackage).
INHERITED_VARIANTS = {"cuda", "cuda_arch"}

# CMake's package name -> the Spack packages behind it, each with strings its
# depends_on line must hold; None: not a Spack dependency (why in the comment).
CMAKE_TO_SPACK = {
    "MPI": {"mpi": []},
    "HDF5": {"hdf5": ["+mpi"]},
    "Kokkos": {"kokkos": []},
    "BLAS": {"openblas": ['when="blas=openblas"'], "blis": ['when="blas=blis"']},
    "dnnl": {"onednn": []},
    "CLI11": {"cli11": []},
    "tomlplusplus": {"tomlplusplus": []},
    "nlohmann_json": {"nlohmann-json": []},
    "ICU": {"icu4c": []},
    "Catch2": {"catch2": ['type="test"']},
    "CUDAToolkit": None,  # CudaPackage's depends_on("cuda", when="+cuda")
    "OpenMP": None,  # the compiler's runtime
    "Git": None,  # QUIET: the revision in `zeropp --version` only
}
# Dependencies found without find_package: (file, pattern) -> Spack package and strings.
EXTRA = {("cmake/ZeroppCuda.cmake", r"find_library\(ZEROPP_NCCL_LIBRARY nccl"): {"nccl": ['when="+cuda"']}}
BUILD_TOOLS = {"cmake"}
# -D switches the recipe sets, each defined by the build (or by CMake itself).
CMAKE_BUILTIN = {"BLA_VENDOR", "HDF5_C_COMPILER_EXECUTABLE", "MPI_C_COMPILER", "MPI_CXX_COMPILER",
                 "CMAKE_CUDA_ARCHITECTURES"}

problems = []


def read(path):
    with open(path) as f:
        return f.read()


def cmake_files():
    return [os.path.join(ROOT, "CMakeLists.txt"), os.path.join(ROOT, "tests/CMakeLists.txt")] + \
        sorted(glob.glob(os.path.join(ROOT, "cmake/*.cmake")))


def code_lines(path):
    """(line number, line without its comment) of a CMake file."""
    for n, line in enumerate(read(path).splitlines(), 1):
        yield n, line.split("#", 1)[0]


def included_under():
    """{cmake file: the if() conditions of the line that includes it} (cmake/*.cmake
    through include(), tests/CMakeLists.txt through add_subdirectory(tests))."""
    under = {}
    for path in cmake_files():
        conds = []
        for _, code in code_lines(path):
            track_if(code, conds)
            m = re.search(r"\binclude\(\s*(Zeropp[A-Za-z]+)\s*\)", code)
            if m:
                under[os.path.join(ROOT, "cmake", m.group(1) + ".cmake")] = tuple(conds)
            if re.search(r"\badd_subdirectory\(\s*tests\s*\)", code):
                under[os.path.join(ROOT, "tests/CMakeLists.txt")] = tuple(conds)
    return under


def track_if(code, conds):
    """Keeps `conds` the stack of if() conditions around the line: the condition's
    text (an option's name for if(OPTION)), "NOT <text>" in its else() branch."""
    m = re.match(r"\s*(if|elseif|else|endif)\s*\((.*)\)", code)
    if not m:
        return
    kind, cond = m.group(1), m.group(2).strip()
    if kind == "if":
        conds.append(cond)
    elif kind == "endif":
        conds.pop()
    else:  # an else or elseif branch: no longer the if's condition
        conds[-1] = "NOT " + conds[-1]


def find_packages():
    """{name: ('file:line', the if() conditions around it)} of every find_package call
    outside comments, with the conditions of the line that includes its file."""
    found = {}
    under = included_under()
    for path in cmake_files():
        conds = list(under.get(path, ()))
        for n, code in code_lines(path):
            track_if(code, conds)
            for m in re.finditer(r"\bfind_package\(\s*([A-Za-z0-9_]+)", code):
                found.setdefault(m.group(1), (f"{os.path.relpath(path, ROOT)}:{n}", tuple(conds)))
    return found


def depends_on(recipe):
    """{spack name: [depends_on lines]}."""
    deps = {}
    for line in recipe.splitlines():
        m = re.match(r'\s*depends_on\(\s*"([a-z0-9-]+)', line)
        if m:
            deps.setdefault(m.group(1), []).append(line.strip())
    return deps


def variants(recipe):
    """{name: default} of the recipe's variant() calls (the default's source text)."""
    return {m.group(1): m.group(2) for m in
            re.finditer(r'variant\(\s*"([a-z0-9_]+)",\s*default=([^,\s]+)', recipe)}


def option_variants(recipe):
    """{CMake option: variant} of the recipe's define_from_variant calls."""
    return dict(re.findall(r'define_from_variant\(\s*"([A-Z0-9_]+)",\s*"([a-z0-9_]+)"\s*\)', recipe))


def check_variants(recipe, build):
    declared = variants(recipe)
    for option, variant in option_variants(recipe).items():
        if variant not in declared and variant not in INHERITED_VARIANTS:
            problems.append(f"{RECIPE}: define_from_variant(\"{option}\", \"{variant}\") names no variant")
        m = re.search(rf"\boption\(\s*{option}\s+\"[^\"]*\"\s+(ON|OFF)\s*\)", build)
        if m and variant in declared and declared[variant] != {"ON": "True", "OFF": "False"}[m.group(1)]:
            problems.append(f"{RECIPE}: variant \"{variant}\" defaults to {declared[variant]}, "
                            f"its CMake option {option} to {m.group(1)}")


def check_when(pkg, origin, conds, lines, mapped):
    """A dependency found inside if(OPTION) for a variant's option: every depends_on
    of it is when="+variant", and no other's is."""
    want = {mapped[c] for c in conds if c in mapped}
    for line in lines:
        have = {v for v in re.findall(r'when="\+([a-z0-9_]+)"', line) if v in mapped.values()}
        if have != want:
            need = ", ".join(f'when="+{v}"' for v in sorted(want)) or "no variant's when="
            problems.append(f"{RECIPE}: {line} needs {need} ({origin} is inside "
                            f"{' and '.join(f'if({c})' for c in conds) or 'no if()'})")


def check_urls(recipe):
    """No download URL: the project has no public home (a site sets its own, README)."""
    for n, line in enumerate(recipe.splitlines(), 1):
        code = line.split("#", 1)[0]
        if re.search(r"https?://|^\s*(url|git|list_url|homepage)\s*=", code):
            problems.append(f"{RECIPE}:{n}: names a URL ({line.strip()}); the project has no public "
                            f"download: leave it to the site's packages.yaml (package_attributes)")


def check_readme(recipe):
    """README.md's spack commands: every zeropp@VERSION a version() of the recipe,
    every +variant / ~variant after it a variant of the recipe."""
    versions = set(re.findall(r'^\s*version\(\s*"([^"]+)"', recipe, re.M))
    known = set(variants(recipe)) | INHERITED_VARIANTS
    specs = re.findall(r"\bspack [a-z-]+ [^\n`]*?zeropp@=?([A-Za-z0-9_.-]+)((?: [~+][a-z0-9_]+)*)", read(README))
    if not specs:
        problems.append(f"{README}: no spack command naming zeropp@VERSION")
    for version, flags in specs:
        if version not in versions:
            problems.append(f"{README}: zeropp@{version}: the recipe's versions are {sorted(versions)}")
        for flag in flags.split():
            if flag[1:] not in known:
                problems.append(f"{README}: zeropp@{version} {flag}: no such variant in the recipe")


def check_recipe():
    recipe = read(RECIPE)
    try:
        compile(recipe, RECIPE, "exec")  # Spack's names are not importable here; the syntax is checked
    except SyntaxError as e:
        problems.append(f"{RECIPE}:{e.lineno}: {e.msg}")
    deps = depends_on(recipe)
    mapped = option_variants(recipe)
    wanted = {}  # spack name -> (origin, strings, if() conditions)
    under = included_under()
    for name, (where, conds) in find_packages().items():
        if name not in CMAKE_TO_SPACK:
            problems.append(f"{where}: find_package({name}) has no entry in CMAKE_TO_SPACK ({__file__})")
        elif CMAKE_TO_SPACK[name]:
            for pkg, strings in CMAKE_TO_SPACK[name].items():
                wanted[pkg] = (f"{where}: find_package({name})", strings, conds)
    for (path, pattern), pkgs in EXTRA.items():
        if re.search(pattern, read(os.path.join(ROOT, path))):
            for pkg, strings in pkgs.items():
                wanted[pkg] = (f"{path}: {pattern}", strings, under.get(os.path.join(ROOT, path), ()))
    for pkg, (origin, strings, conds) in sorted(wanted.items()):
        if pkg not in deps:
            problems.append(f"{RECIPE}: no depends_on(\"{pkg}\") for {origin}")
            continue
        for s in strings:
            if not any(s in line for line in deps[pkg]):
                problems.append(f"{RECIPE}: depends_on(\"{pkg}\") lacks {s} ({origin})")
        check_when(pkg, origin, conds, deps[pkg], mapped)
    for pkg in sorted(set(deps) - set(wanted) - BUILD_TOOLS):
        problems.append(f"{RECIPE}: depends_on(\"{pkg}\") matches no find_package of the build")
    if not re.search(r"class Zeropp\(CMakePackage, CudaPackage\)", recipe):
        problems.append(f"{RECIPE}: class Zeropp must derive from CMakePackage and CudaPackage (cuda, cuda_arch)")
    build = "\n".join(read(p) for p in cmake_files())
    for m in re.finditer(r'self\.define(?:_from_variant)?\(\s*"([A-Z0-9_]+)"', recipe):
        name = m.group(1)
        if name not in CMAKE_BUILTIN and not re.search(rf"(option|set)\(\s*{name}\b", build):
            problems.append(f"{RECIPE}: sets -D{name}, which no CMake file defines")
    check_variants(recipe, build)
    check_urls(recipe)
    check_readme(recipe)


def module_paths(text, pattern):
    return {m.group(1): m.group(2) for m in re.finditer(pattern, text, re.M)}


def check_modules():
    lua = read(os.path.join(ROOT, "packaging/modules/zeropp.lua.in"))
    tcl = read(os.path.join(ROOT, "packaging/modules/zeropp.tcl.in"))
    lua_vars = module_paths(lua, r'^(?:prepend_path|setenv)\("([A-Z_]+)", pathJoin\(prefix, "([^"]+)"\)\)')
    tcl_vars = module_paths(tcl, r"^(?:prepend-path|setenv) ([A-Z_]+) \$prefix/(\S+)$")
    if not lua_vars:
        problems.append("packaging/modules/zeropp.lua.in: sets no path under the prefix")
    if lua_vars != tcl_vars:
        problems.append(f"packaging/modules: the Lmod file sets {lua_vars}, the Tcl file {tcl_vars}")
    for name, text in (("zeropp.lua.in", lua), ("zeropp.tcl.in", tcl)):
        if "@ZEROPP_PREFIX@" not in text:
            problems.append(f"packaging/modules/{name}: no @ZEROPP_PREFIX@ for the install to fill in")


def main():
    check_recipe()
    check_modules()
    for p in problems:
        print(f"FAIL {p}")
    if problems:
        sys.exit(1)
    print("spack lint: OK")


if __name__ == "__main__":
    main()
