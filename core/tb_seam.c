#include "core/tb_seam.h"

#include <stdlib.h>

static const char *const seam_names[TB_SEAM_COUNT] = {
    [TB_SEAM_STORE_CRASH_AFTER] = "TB_STORE_CRASH_AFTER",
    [TB_SEAM_FENCING_DELAY_MS] = "TB_FENCING_DELAY_MS",
    [TB_SEAM_EOS_START_DELAY] = "TB_EOS_START_DELAY",
    [TB_SEAM_FILE_SINK_HOLD] = "TB_FILE_SINK_HOLD",
    [TB_SEAM_STATUS_WRITE_HOLD] = "TB_STATUS_WRITE_HOLD",
    [TB_SEAM_STORE_WRITE_STALL] = "TB_STORE_WRITE_STALL",
};

const char *tb_seam_name(tb_seam_t seam)
{
    return seam_names[seam];
}

const char *tb_seam(tb_seam_t seam)
{
#ifdef TB_TEST_SEAMS
    return getenv(seam_names[seam]);
#else
    (void)seam;
    return NULL;
#endif
}
