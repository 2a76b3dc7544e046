/*
 * What a driver's binary must look like before clCreateProgramWithBinary
 * (docs/IMPLEMENTATIONS.md). PoCL and NVIDIA refuse a foreign binary with
 * CL_INVALID_BINARY; Mesa's rusticl 22.3 aborts the process (a Rust panic,
 * "unknown version"). The cache's checksum cannot see an entry damaged by
 * its writer or by hand, so for rusticl the header is checked first and
 * such an entry is a miss like any other.
 *
 * rusticl 22.3's binary: u32 format version (1), u32 SPIR-V length, u32
 * cl_program_binary_type, the SPIR-V module (magic 0x07230203).
 */
#include "ocl/program.h"

#include <string.h>

#define RUSTICL_HEADER  12
#define RUSTICL_VERSION 1
#define SPIRV_MAGIC     0x07230203u

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static bool rusticl_binary(const unsigned char *bin, size_t len, char *why, size_t size)
{
    if (len < RUSTICL_HEADER + 4)
        return bcl_why(why, size, "%zu bytes, shorter than rusticl's header", len);
    uint32_t version = le32(bin), spirv = le32(bin + 4), type = le32(bin + 8);
    if (version != RUSTICL_VERSION)
        return bcl_why(why, size, "rusticl binary format %u, expected %u", version,
                       RUSTICL_VERSION);
    if ((size_t)spirv != len - RUSTICL_HEADER)
        return bcl_why(why, size, "its header gives %u bytes of SPIR-V, the entry holds %zu", spirv,
                       len - RUSTICL_HEADER);
    if (type != CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT && type != CL_PROGRAM_BINARY_TYPE_LIBRARY &&
        type != CL_PROGRAM_BINARY_TYPE_EXECUTABLE)
        return bcl_why(why, size, "binary type 0x%x is none of OpenCL's", type);
    if (le32(bin + RUSTICL_HEADER) != SPIRV_MAGIC)
        return bcl_why(why, size, "no SPIR-V module after rusticl's header");
    return true;
}

bool bcl_binary_plausible(const bcl_device_info *dev, const unsigned char *bin, size_t len,
                          char *why, size_t size)
{
    why[0] = '\0';
    if (strcmp(dev->platform_name, "rusticl") == 0 && !rusticl_binary(bin, len, why, size))
        return false;
    return true;
}
