# CPack: `cpack -G DEB` in a build directory makes rampart_<version>_<arch>.deb
# from what `cmake --install` installs. scripts/build-deb.sh is the way to
# build one: a portable (RAMPART_NATIVE=OFF) Release build configured with
# CMAKE_INSTALL_PREFIX=/usr, so that the paths the systemd unit and rampartd
# carry are the package's. Included last from the top CMakeLists.txt.
include(GNUInstallDirs)

if(NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  message(STATUS "rampart: CMAKE_INSTALL_PREFIX is ${CMAKE_INSTALL_PREFIX}: "
    "a package built here installs there; scripts/build-deb.sh uses /usr")
endif()

set(RAMPART_PACKAGE_MAINTAINER "rampart maintainers <rampart@localhost>" CACHE STRING
  "Maintainer field of the Debian package")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME rampart)
set(CPACK_PACKAGE_VENDOR rampart)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${RAMPART_PACKAGE_MAINTAINER})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "kernel-bypass stateful firewall (AF_XDP, DPDK)")
set(CPACK_PACKAGE_DESCRIPTION
"rampart takes packets off the NIC with AF_XDP sockets (or DPDK), filters,
tracks and translates them in user space, one pinned worker per queue, and
leaves the machine's own traffic to the Linux stack. Policies are written in
YAML and compiled by rulec into a checksummed artifact that rampartd swaps in
without dropping a packet; rampartctl shows status, counters and flows.")
# Install exactly where `cmake --install` would: absolute destinations
# (/etc/rampart) included, under the packaging root.
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_SET_DESTDIR ON)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)     # rampart_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${RAMPART_PACKAGE_MAINTAINER})
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends: dpkg-shlibdeps reads the binaries and names the package of every
# shared library they link, with versions (libxdp1, libbpf1, libyaml-0-2,
# libpcap0.8, libmnl0, libc6, and DPDK's librte-* when rampartd has the DPDK
# backend); tests/pkg/test_deb.sh checks it against readelf.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "xdp-tools, ethtool, iproute2")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion")
# /etc/rampart/rampartd.conf is the operator's: a conffile dpkg keeps on
# upgrade and removal.
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_SOURCE_DIR}/packaging/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

include(CPack)
