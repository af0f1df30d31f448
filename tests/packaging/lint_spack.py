#!/usr/bin/python3
"""Lints packaging/spack/packages/zeropp/package.py against the build (Spack
itself is not needed): every find_package in CMakeLists.txt, cmake/*.cmake and
tests/CMakeLists.txt has an entry in CMAKE_TO_SPACK and its Spack packages a
depends_on (with the spec and deptype the entry asks for), every depends_on is
the image of some find_package (or of a library in EXTRA), the recipe's CMake
switches exist in the build; and the Lmod and Tcl module templates set the same
variables to the same install-relative paths. Prints "spack lint: OK" or one
line per problem and exits 1."""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RECIPE = os.path.join(ROOT, "packaging/spack/packages/zeropp/package.py")

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


def find_packages():
    """{name: 'file:line'} of every find_package call outside comments."""
    found = {}
    for path in cmake_files():
        for n, line in enumerate(read(path).splitlines(), 1):
            code = line.split("#", 1)[0]
            for m in re.finditer(r"\bfind_package\(\s*([A-Za-z0-9_]+)", code):
                found.setdefault(m.group(1), f"{os.path.relpath(path, ROOT)}:{n}")
    return found


def depends_on(recipe):
    """{spack name: [depends_on lines]}."""
    deps = {}
    for line in recipe.splitlines():
        m = re.match(r'\s*depends_on\(\s*"([a-z0-9-]+)', line)
        if m:
            deps.setdefault(m.group(1), []).append(line.strip())
    return deps


def check_recipe():
    recipe = read(RECIPE)
    try:
        compile(recipe, RECIPE, "exec")  # Spack's names are not importable here; the syntax is checked
    except SyntaxError as e:
        problems.append(f"{RECIPE}:{e.lineno}: {e.msg}")
    deps = depends_on(recipe)
    wanted = {}  # spack name -> (origin, strings)
    for name, where in find_packages().items():
        if name not in CMAKE_TO_SPACK:
            problems.append(f"{where}: find_package({name}) has no entry in CMAKE_TO_SPACK ({__file__})")
        elif CMAKE_TO_SPACK[name]:
            for pkg, strings in CMAKE_TO_SPACK[name].items():
                wanted[pkg] = (f"{where}: find_package({name})", strings)
    for (path, pattern), pkgs in EXTRA.items():
        if re.search(pattern, read(os.path.join(ROOT, path))):
            for pkg, strings in pkgs.items():
                wanted[pkg] = (f"{path}: {pattern}", strings)
    for pkg, (origin, strings) in sorted(wanted.items()):
        if pkg not in deps:
            problems.append(f"{RECIPE}: no depends_on(\"{pkg}\") for {origin}")
            continue
        for s in strings:
            if not any(s in line for line in deps[pkg]):
                problems.append(f"{RECIPE}: depends_on(\"{pkg}\") lacks {s} ({origin})")
    for pkg in sorted(set(deps) - set(wanted) - BUILD_TOOLS):
        problems.append(f"{RECIPE}: depends_on(\"{pkg}\") matches no find_package of the build")
    if not re.search(r"class Zeropp\(CMakePackage, CudaPackage\)", recipe):
        problems.append(f"{RECIPE}: class Zeropp must derive from CMakePackage and CudaPackage (cuda, cuda_arch)")
    build = "\n".join(read(p) for p in cmake_files())
    for m in re.finditer(r'self\.define(?:_from_variant)?\(\s*"([A-Z0-9_]+)"', recipe):
        name = m.group(1)
        if name not in CMAKE_BUILTIN and not re.search(rf"(option|set)\(\s*{name}\b", build):
            problems.append(f"{RECIPE}: sets -D{name}, which no CMake file defines")


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
