/*
 * The state check (docs/DESIGN.md "State checks"): appended to every model's
 * program source, so it is built, cached and loaded with the model's kernels.
 * flag[0] becomes 1 when any float of the state is NaN or an infinity (all
 * exponent bits set). Every work-item that finds one writes the same value,
 * so the racing writes need no atomics; the host zeroes the flag first.
 * Each work-item reads every get_global_size(0)-th ball: neighbours read
 * neighbours, so a GPU's loads coalesce.
 */
kernel void bcl_nonfinite(global const uint4 *s, uint n4, global uint *flag)
{
    size_t items = get_global_size(0);
    int bad = 0;
    for (size_t i = get_global_id(0); i < n4; i += items)
        bad |= any((s[i] & (uint4)0x7f800000u) == (uint4)0x7f800000u);
    if (bad)
        flag[0] = 1u;
}
