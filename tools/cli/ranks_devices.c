/*
 * Which devices a rank drives (docs/SCALING.md): the node's candidates by
 * the library's one selector parser (bcl_device_select_every), shared
 * among the node's ranks.
 */
#include "ranks.h"

#include "ocl/ocl.h"

#include <stdlib.h>

int ranks_node_devices(const bcl_device_list *list, const char *text, bool every, size_t *idx,
                       size_t cap, size_t *n, bcl_error *e)
{
    size_t *cand = calloc(list->count + 1, sizeof *cand), g = 0;
    if (!cand)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    int rc = bcl_device_select_every(list, every && (!text || !*text) ? "all" : text, cand,
                                     list->count + 1, &g, e);
    size_t r = (size_t)ranks_node_rank(), l = (size_t)ranks_node_size();
    *n = 0;
    if (rc == BCL_OK && l >= g && !every) {
        idx[(*n)++] = cand[r % g];
    } else if (rc == BCL_OK) {
        /* Fewer ranks than devices on this node (or every device wanted
         * once): each rank takes every l-th. */
        for (size_t i = r; i < g && rc == BCL_OK; i += l) {
            if (*n == cap)
                rc = bcl_fail(e, BCL_EXIT_INPUT,
                              "rank %d would drive more than %zu devices: run more ranks per node",
                              ranks_rank(), cap);
            else
                idx[(*n)++] = cand[i];
        }
    }
    free(cand);
    return rc;
}
