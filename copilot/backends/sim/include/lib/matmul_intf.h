// The high-level Matmul API (sim backend). A kernel that defines ASCENDC_CUBE_ONLY before including
// this header is a pure cube kernel; otherwise Matmul calls come from the AIVs of a MIX kernel.
#pragma once
#include "kernel_operator.h"
#include "cannsim/matmul.h"
#ifdef ASCENDC_CUBE_ONLY
#define CANNSIM_MM_CUBE_ONLY true
#else
#define CANNSIM_MM_CUBE_ONLY false
#endif
#ifndef REGIST_MATMUL_OBJ
#define REGIST_MATMUL_OBJ(tpipe, workspace, ...)                                              \
    ((void)::cannsim::mm::ModeUse<CANNSIM_MM_CUBE_ONLY>::registered,                          \
     ::cannsim::mm::regist(tpipe, workspace, ::cannsim::SrcLoc::current(), __VA_ARGS__))
#endif
