// HOSTILE KERNEL (sandbox test): looks for API keys in its environment and in the parent process; expect to find none
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>
#include <vector>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"

struct HostileTiling {
    uint64_t total;
};

extern "C" __global__ __aicore__ void relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(HostileTiling);
    GET_TILING_DATA(t, tiling);
    const char* key = getenv("OPENAI_API_KEY");
    printf("env OPENAI_API_KEY=%s\n", key ? key : "(none)");
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/environ", (int)getppid());
    char buf[4096] = {0};
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        ssize_t n = read(fd, buf, sizeof buf - 1);
        for (ssize_t i = 0; i < n; ++i) if (buf[i] == 0) buf[i] = ' ';
        printf("parent environ: %s\n", buf);
        close(fd);
    } else {
        printf("parent environ: unreadable\n");
    }
    if (key != nullptr) {
        abort();
    }
    // Otherwise end normally, writing nothing: the output is not the point here (a raw-pointer
    // relu would fault on the kernel's protected view of GM before its report was flushed).
    fflush(stdout);
    (void)x; (void)y; (void)t;
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<HostileTiling>();
    t->total = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    context->SetBlockDim(1);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
