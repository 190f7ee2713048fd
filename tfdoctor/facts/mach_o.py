"""Which CPU architectures a Mach-O file holds, from its first bytes (recorded as hex in the facts).

The target interpreter records the raw header of its real executable and of every plugin library
(child/target_info.py); this module reads it, so a saved report can be read again. Layouts (Apple's
mach-o/loader.h and mach-o/fat.h, https://github.com/apple-oss-distributions/xnu/tree/main/EXTERNAL_HEADERS/mach-o):
  thin 64-bit   cf fa ed fe | cputype (LE u32) | cpusubtype | filetype ...
  thin 32-bit   ce fa ed fe | same fields
  universal     ca fe ba be | nfat_arch (BE u32) | nfat_arch x fat_arch{cputype, cpusubtype, offset, size, align}
  universal 64  ca fe ba bf | nfat_arch | nfat_arch x fat_arch_64 (32 bytes each)
A universal file says what *can* run; which slice *does* run is sysctl.proc_translated's answer.
"""

from __future__ import annotations

import struct
from typing import Optional

CPU_ARCH_ABI64 = 0x01000000
CPU_TYPES = {
    7: "i386",
    7 | CPU_ARCH_ABI64: "x86_64",
    12: "arm",
    12 | CPU_ARCH_ABI64: "arm64",
    18: "ppc",
    18 | CPU_ARCH_ABI64: "ppc64",
}
CPU_SUBTYPE_MASK = 0x00FFFFFF  # the top byte carries capability flags (LIB64, arm64e's PTRAUTH ABI)
CPU_SUBTYPE_ARM64E = 2

THIN_MAGIC = {b"\xcf\xfa\xed\xfe": "<", b"\xce\xfa\xed\xfe": "<", b"\xfe\xed\xfa\xcf": ">", b"\xfe\xed\xfa\xce": ">"}
FAT_MAGIC = b"\xca\xfe\xba\xbe"
FAT_MAGIC_64 = b"\xca\xfe\xba\xbf"
MAX_FAT_ARCHS = 16  # real universal binaries hold 2-4 slices; Java class files share 0xcafebabe with version >= 45


def architecture_name(cputype: int, cpusubtype: int) -> str:
    name = CPU_TYPES.get(cputype, f"cputype-{cputype:#x}")
    if name == "arm64" and cpusubtype & CPU_SUBTYPE_MASK == CPU_SUBTYPE_ARM64E:
        return "arm64e"
    return name


def architectures(header: bytes) -> Optional[list[str]]:
    """['arm64'] / ['x86_64', 'arm64'] for Mach-O headers; None when the bytes are not Mach-O."""
    magic = header[:4]
    if magic in THIN_MAGIC:
        if len(header) < 12:
            return None
        cputype, cpusubtype = struct.unpack(THIN_MAGIC[magic] + "II", header[4:12])
        return [architecture_name(cputype, cpusubtype)]
    if magic in (FAT_MAGIC, FAT_MAGIC_64):
        if len(header) < 8:
            return None
        (count,) = struct.unpack(">I", header[4:8])
        if count == 0 or count > MAX_FAT_ARCHS:
            return None
        size = 32 if magic == FAT_MAGIC_64 else 20
        found = []
        for index in range(count):
            start = 8 + index * size
            if len(header) < start + 8:
                break
            cputype, cpusubtype = struct.unpack(">II", header[start:start + 8])
            found.append(architecture_name(cputype, cpusubtype))
        return found or None
    return None


def architectures_from_hex(header_hex: Optional[str]) -> Optional[list[str]]:
    if not header_hex:
        return None
    try:
        raw = bytes.fromhex(header_hex.replace(" ", ""))
    except ValueError:
        return None
    return architectures(raw)


def is_arm64(arch: str) -> bool:
    """arm64 and arm64e both run natively on Apple silicon."""
    return arch in ("arm64", "arm64e")
