// Names and messages of cudaError_t, for cudaGetErrorName/String.
// The names are every enumerator of CUDA 13.0's driver_types.h; the
// messages are the real runtime's for the errors the emulator returns.
#include <cuda_runtime_api.h>

namespace {

struct ErrorText {
  int code;
  const char* name;
  const char* text;
};

constexpr ErrorText kErrors[] = {
    {0, "cudaSuccess", "no error"},
    {1, "cudaErrorInvalidValue", "invalid argument"},
    {2, "cudaErrorMemoryAllocation", "out of memory"},
    {3, "cudaErrorInitializationError", "initialization error"},
    {4, "cudaErrorCudartUnloading", "driver shutting down"},
    {5, "cudaErrorProfilerDisabled", "cudaErrorProfilerDisabled"},
    {6, "cudaErrorProfilerNotInitialized", "cudaErrorProfilerNotInitialized"},
    {7, "cudaErrorProfilerAlreadyStarted", "cudaErrorProfilerAlreadyStarted"},
    {8, "cudaErrorProfilerAlreadyStopped", "cudaErrorProfilerAlreadyStopped"},
    {9, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
    {12, "cudaErrorInvalidPitchValue", "cudaErrorInvalidPitchValue"},
    {13, "cudaErrorInvalidSymbol", "cudaErrorInvalidSymbol"},
    {16, "cudaErrorInvalidHostPointer", "cudaErrorInvalidHostPointer"},
    {17, "cudaErrorInvalidDevicePointer", "cudaErrorInvalidDevicePointer"},
    {18, "cudaErrorInvalidTexture", "cudaErrorInvalidTexture"},
    {19, "cudaErrorInvalidTextureBinding", "cudaErrorInvalidTextureBinding"},
    {20, "cudaErrorInvalidChannelDescriptor", "cudaErrorInvalidChannelDescriptor"},
    {21, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
    {22, "cudaErrorAddressOfConstant", "cudaErrorAddressOfConstant"},
    {23, "cudaErrorTextureFetchFailed", "cudaErrorTextureFetchFailed"},
    {24, "cudaErrorTextureNotBound", "cudaErrorTextureNotBound"},
    {25, "cudaErrorSynchronizationError", "cudaErrorSynchronizationError"},
    {26, "cudaErrorInvalidFilterSetting", "cudaErrorInvalidFilterSetting"},
    {27, "cudaErrorInvalidNormSetting", "cudaErrorInvalidNormSetting"},
    {28, "cudaErrorMixedDeviceExecution", "cudaErrorMixedDeviceExecution"},
    {31, "cudaErrorNotYetImplemented", "cudaErrorNotYetImplemented"},
    {32, "cudaErrorMemoryValueTooLarge", "cudaErrorMemoryValueTooLarge"},
    {34, "cudaErrorStubLibrary", "cudaErrorStubLibrary"},
    {35, "cudaErrorInsufficientDriver", "CUDA driver version is insufficient for CUDA runtime version"},
    {36, "cudaErrorCallRequiresNewerDriver", "cudaErrorCallRequiresNewerDriver"},
    {37, "cudaErrorInvalidSurface", "cudaErrorInvalidSurface"},
    {43, "cudaErrorDuplicateVariableName", "cudaErrorDuplicateVariableName"},
    {44, "cudaErrorDuplicateTextureName", "cudaErrorDuplicateTextureName"},
    {45, "cudaErrorDuplicateSurfaceName", "cudaErrorDuplicateSurfaceName"},
    {46, "cudaErrorDevicesUnavailable", "CUDA-capable device(s) is/are busy or unavailable"},
    {49, "cudaErrorIncompatibleDriverContext", "cudaErrorIncompatibleDriverContext"},
    {52, "cudaErrorMissingConfiguration", "cudaErrorMissingConfiguration"},
    {53, "cudaErrorPriorLaunchFailure", "cudaErrorPriorLaunchFailure"},
    {65, "cudaErrorLaunchMaxDepthExceeded", "cudaErrorLaunchMaxDepthExceeded"},
    {66, "cudaErrorLaunchFileScopedTex", "cudaErrorLaunchFileScopedTex"},
    {67, "cudaErrorLaunchFileScopedSurf", "cudaErrorLaunchFileScopedSurf"},
    {68, "cudaErrorSyncDepthExceeded", "cudaErrorSyncDepthExceeded"},
    {69, "cudaErrorLaunchPendingCountExceeded", "cudaErrorLaunchPendingCountExceeded"},
    {98, "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {100, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {101, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {102, "cudaErrorDeviceNotLicensed", "cudaErrorDeviceNotLicensed"},
    {103, "cudaErrorSoftwareValidityNotEstablished", "cudaErrorSoftwareValidityNotEstablished"},
    {127, "cudaErrorStartupFailure", "cudaErrorStartupFailure"},
    {200, "cudaErrorInvalidKernelImage", "cudaErrorInvalidKernelImage"},
    {201, "cudaErrorDeviceUninitialized", "cudaErrorDeviceUninitialized"},
    {205, "cudaErrorMapBufferObjectFailed", "cudaErrorMapBufferObjectFailed"},
    {206, "cudaErrorUnmapBufferObjectFailed", "cudaErrorUnmapBufferObjectFailed"},
    {207, "cudaErrorArrayIsMapped", "cudaErrorArrayIsMapped"},
    {208, "cudaErrorAlreadyMapped", "cudaErrorAlreadyMapped"},
    {209, "cudaErrorNoKernelImageForDevice", "cudaErrorNoKernelImageForDevice"},
    {210, "cudaErrorAlreadyAcquired", "cudaErrorAlreadyAcquired"},
    {211, "cudaErrorNotMapped", "cudaErrorNotMapped"},
    {212, "cudaErrorNotMappedAsArray", "cudaErrorNotMappedAsArray"},
    {213, "cudaErrorNotMappedAsPointer", "cudaErrorNotMappedAsPointer"},
    {214, "cudaErrorECCUncorrectable", "cudaErrorECCUncorrectable"},
    {215, "cudaErrorUnsupportedLimit", "cudaErrorUnsupportedLimit"},
    {216, "cudaErrorDeviceAlreadyInUse", "cudaErrorDeviceAlreadyInUse"},
    {217, "cudaErrorPeerAccessUnsupported", "cudaErrorPeerAccessUnsupported"},
    {218, "cudaErrorInvalidPtx", "cudaErrorInvalidPtx"},
    {219, "cudaErrorInvalidGraphicsContext", "cudaErrorInvalidGraphicsContext"},
    {220, "cudaErrorNvlinkUncorrectable", "cudaErrorNvlinkUncorrectable"},
    {221, "cudaErrorJitCompilerNotFound", "cudaErrorJitCompilerNotFound"},
    {222, "cudaErrorUnsupportedPtxVersion", "cudaErrorUnsupportedPtxVersion"},
    {223, "cudaErrorJitCompilationDisabled", "cudaErrorJitCompilationDisabled"},
    {224, "cudaErrorUnsupportedExecAffinity", "cudaErrorUnsupportedExecAffinity"},
    {225, "cudaErrorUnsupportedDevSideSync", "cudaErrorUnsupportedDevSideSync"},
    {226, "cudaErrorContained", "cudaErrorContained"},
    {300, "cudaErrorInvalidSource", "cudaErrorInvalidSource"},
    {301, "cudaErrorFileNotFound", "cudaErrorFileNotFound"},
    {302, "cudaErrorSharedObjectSymbolNotFound", "cudaErrorSharedObjectSymbolNotFound"},
    {303, "cudaErrorSharedObjectInitFailed", "cudaErrorSharedObjectInitFailed"},
    {304, "cudaErrorOperatingSystem", "cudaErrorOperatingSystem"},
    {400, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {401, "cudaErrorIllegalState", "cudaErrorIllegalState"},
    {402, "cudaErrorLossyQuery", "cudaErrorLossyQuery"},
    {500, "cudaErrorSymbolNotFound", "named symbol not found"},
    {600, "cudaErrorNotReady", "device not ready"},
    {700, "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
    {701, "cudaErrorLaunchOutOfResources", "cudaErrorLaunchOutOfResources"},
    {702, "cudaErrorLaunchTimeout", "cudaErrorLaunchTimeout"},
    {703, "cudaErrorLaunchIncompatibleTexturing", "cudaErrorLaunchIncompatibleTexturing"},
    {704, "cudaErrorPeerAccessAlreadyEnabled", "cudaErrorPeerAccessAlreadyEnabled"},
    {705, "cudaErrorPeerAccessNotEnabled", "cudaErrorPeerAccessNotEnabled"},
    {708, "cudaErrorSetOnActiveProcess", "cudaErrorSetOnActiveProcess"},
    {709, "cudaErrorContextIsDestroyed", "context is destroyed"},
    {710, "cudaErrorAssert", "cudaErrorAssert"},
    {711, "cudaErrorTooManyPeers", "cudaErrorTooManyPeers"},
    {712, "cudaErrorHostMemoryAlreadyRegistered", "cudaErrorHostMemoryAlreadyRegistered"},
    {713, "cudaErrorHostMemoryNotRegistered", "cudaErrorHostMemoryNotRegistered"},
    {714, "cudaErrorHardwareStackError", "cudaErrorHardwareStackError"},
    {715, "cudaErrorIllegalInstruction", "cudaErrorIllegalInstruction"},
    {716, "cudaErrorMisalignedAddress", "cudaErrorMisalignedAddress"},
    {717, "cudaErrorInvalidAddressSpace", "cudaErrorInvalidAddressSpace"},
    {718, "cudaErrorInvalidPc", "cudaErrorInvalidPc"},
    {719, "cudaErrorLaunchFailure", "unspecified launch failure"},
    {720, "cudaErrorCooperativeLaunchTooLarge", "cudaErrorCooperativeLaunchTooLarge"},
    {721, "cudaErrorTensorMemoryLeak", "cudaErrorTensorMemoryLeak"},
    {800, "cudaErrorNotPermitted", "cudaErrorNotPermitted"},
    {801, "cudaErrorNotSupported", "operation not supported"},
    {802, "cudaErrorSystemNotReady", "cudaErrorSystemNotReady"},
    {803, "cudaErrorSystemDriverMismatch", "cudaErrorSystemDriverMismatch"},
    {804, "cudaErrorCompatNotSupportedOnDevice", "cudaErrorCompatNotSupportedOnDevice"},
    {805, "cudaErrorMpsConnectionFailed", "cudaErrorMpsConnectionFailed"},
    {806, "cudaErrorMpsRpcFailure", "cudaErrorMpsRpcFailure"},
    {807, "cudaErrorMpsServerNotReady", "cudaErrorMpsServerNotReady"},
    {808, "cudaErrorMpsMaxClientsReached", "cudaErrorMpsMaxClientsReached"},
    {809, "cudaErrorMpsMaxConnectionsReached", "cudaErrorMpsMaxConnectionsReached"},
    {810, "cudaErrorMpsClientTerminated", "cudaErrorMpsClientTerminated"},
    {811, "cudaErrorCdpNotSupported", "cudaErrorCdpNotSupported"},
    {812, "cudaErrorCdpVersionMismatch", "cudaErrorCdpVersionMismatch"},
    {900, "cudaErrorStreamCaptureUnsupported", "operation not permitted when stream is capturing"},
    {901, "cudaErrorStreamCaptureInvalidated", "operation failed due to a previous error during capture"},
    {902, "cudaErrorStreamCaptureMerge", "cudaErrorStreamCaptureMerge"},
    {903, "cudaErrorStreamCaptureUnmatched", "capture was not initiated in this stream"},
    {904, "cudaErrorStreamCaptureUnjoined", "cudaErrorStreamCaptureUnjoined"},
    {905, "cudaErrorStreamCaptureIsolation", "cudaErrorStreamCaptureIsolation"},
    {906, "cudaErrorStreamCaptureImplicit", "cudaErrorStreamCaptureImplicit"},
    {907, "cudaErrorCapturedEvent", "cudaErrorCapturedEvent"},
    {908, "cudaErrorStreamCaptureWrongThread", "attempt to terminate a thread-local capture sequence from another thread"},
    {909, "cudaErrorTimeout", "cudaErrorTimeout"},
    {910, "cudaErrorGraphExecUpdateFailure", "cudaErrorGraphExecUpdateFailure"},
    {911, "cudaErrorExternalDevice", "cudaErrorExternalDevice"},
    {912, "cudaErrorInvalidClusterSize", "cudaErrorInvalidClusterSize"},
    {913, "cudaErrorFunctionNotLoaded", "cudaErrorFunctionNotLoaded"},
    {914, "cudaErrorInvalidResourceType", "cudaErrorInvalidResourceType"},
    {915, "cudaErrorInvalidResourceConfiguration", "cudaErrorInvalidResourceConfiguration"},
    {999, "cudaErrorUnknown", "cudaErrorUnknown"},
    {10000, "cudaErrorApiFailureBase", "cudaErrorApiFailureBase"},
};

const ErrorText* Find(cudaError_t e) {
  for (const ErrorText& t : kErrors) {
    if (t.code == static_cast<int>(e)) return &t;
  }
  return nullptr;
}

}  // namespace

const char* cudaGetErrorName(cudaError_t error) {
  const ErrorText* t = Find(error);
  return t != nullptr ? t->name : "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t error) {
  const ErrorText* t = Find(error);
  return t != nullptr ? t->text : "unknown error";
}

namespace shardfeed::gpu::emu {

// The cudaError_t named `name` ("cudaErrorNoDevice"), or -1.
int ErrorFromName(const char* name) {
  for (const ErrorText& t : kErrors) {
    if (__builtin_strcmp(t.name, name) == 0) return t.code;
  }
  return -1;
}

}  // namespace shardfeed::gpu::emu
