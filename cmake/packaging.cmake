# The Debian package, for CI images: `cpack -G DEB` in a built build folder writes
# convbench_<version>_<arch>.deb with what `cmake --install` installs, under /usr (app/README.md,
# "Installing convbench"). Included from the top-level CMakeLists.txt, after the install rules.
set(CPACK_PACKAGE_NAME convbench)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "The convbench developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "which convolution block variant is really fastest and leanest, and why")
# One string (a quoted argument continued by backslashes; separate ones would make a list).
set(CPACK_PACKAGE_DESCRIPTION "convbench builds every variant of a convolution block (standard, bottleneck, \
depthwise-separable, grouped, your own op graph or ONNX export) on its own runtime (oneDNN on the CPU, \
cuDNN on a GPU, a plain-loop reference) and reports parameters, FLOPs, bytes, predicted and measured \
memory and time, and why they differ.")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# A package's Maintainer field must be "Name <address>": the authors CITATION.cff names, at the
# address the project's commits carry. A CI that builds its own package sets its own.
set(CONVBENCH_DEB_MAINTAINER "The convbench developers <maintainers@users.noreply.a-seed-5d350f5b.example>"
    CACHE STRING "The Debian package's Maintainer field (Name <address>)")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CONVBENCH_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # convbench_0.1.0_amd64.deb
# Depends: dpkg-shlibdeps reads the libraries the binary links and names the Debian packages that
# hold them (libdnnl3, libyaml-cpp0.7, libonnx1, ...). A library no package holds is left out
# (CPack passes --ignore-missing-info): the CUDA toolkit's and cuDNN's, when the CUDA backend is
# built, which the machine that installs the package must then have at the same path.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# What some commands run when asked to, not what the program needs: Python for compare --peer
# torch (its environment comes from PyPI, scripts/setup-peers.sh), rsvg-convert for the PDF
# figures of --plots, Slurm's client for `convbench slurm`.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3, python3-venv, librsvg2-bin, slurm-client")
# The binary without its symbol table, as Debian's own packages ship it (6.1 MB instead of 7.1).
set(CPACK_STRIP_FILES ON)
include(CPack)
