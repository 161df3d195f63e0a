// cuBLAS for the gemm benchmarks: the real header on the GPU machine (which links
// -lcublas), or, only to compile the harnesses without the cuBLAS headers (the no-GPU
// compile check in CI), cuBLAS's public declarations and enum values for the calls they
// make. Test tooling, not part of the product.
#pragma once
#include <library_types.h>

#if __has_include(<cublas_v2.h>)
#include <cublas_v2.h>
#else
typedef struct cublasContext* cublasHandle_t;
typedef enum { CUBLAS_STATUS_SUCCESS = 0 } cublasStatus_t;
typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 } cublasOperation_t;
typedef enum { CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_32F_FAST_TF32 = 77 } cublasComputeType_t;
typedef enum { CUBLAS_GEMM_DEFAULT = -1 } cublasGemmAlgo_t;
extern "C" cublasStatus_t cublasCreate_v2(cublasHandle_t*);
extern "C" cublasStatus_t cublasDestroy_v2(cublasHandle_t);
extern "C" cublasStatus_t cublasSgemm_v2(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                         const float*, const float*, int, const float*, int, const float*, float*,
                                         int);
extern "C" cublasStatus_t cublasGemmEx(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                       const void*, const void*, cudaDataType, int, const void*, cudaDataType, int,
                                       const void*, void*, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
#define cublasCreate cublasCreate_v2
#define cublasDestroy cublasDestroy_v2
#define cublasSgemm cublasSgemm_v2
#endif
