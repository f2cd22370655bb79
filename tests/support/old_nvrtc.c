/* A stand-in libnvrtc that reports version 12.0, for the tests that bandjit does not compile
   with an NVRTC too old for its kernels and prefers a newer one (runtime/nvrtc_api.cpp). It
   exports what bandjit binds; nothing but the version and the target list is ever called. */
#include <stddef.h>

int nvrtcVersion(int* major, int* minor) {
  *major = 12;
  *minor = 0;
  return 0;
}
int nvrtcGetNumSupportedArchs(int* count) {
  *count = 0;
  return 0;
}
int nvrtcGetSupportedArchs(int* archs) {
  (void)archs;
  return 0;
}
const char* nvrtcGetErrorString(int result) {
  (void)result;
  return "stand-in NVRTC 12.0";
}
/* Never reached: compile() refuses this version first. Each fails. */
int nvrtcCreateProgram(void** program, const char* text, const char* name, int headers, const char* const* texts,
                       const char* const* names) {
  (void)program, (void)text, (void)name, (void)headers, (void)texts, (void)names;
  return 1;
}
int nvrtcDestroyProgram(void** program) {
  (void)program;
  return 0;
}
int nvrtcCompileProgram(void* program, int count, const char* const* options) {
  (void)program, (void)count, (void)options;
  return 1;
}
int nvrtcGetProgramLogSize(void* program, size_t* size) {
  (void)program;
  *size = 0;
  return 1;
}
int nvrtcGetProgramLog(void* program, char* log) {
  (void)program, (void)log;
  return 1;
}
int nvrtcGetCUBINSize(void* program, size_t* size) {
  (void)program;
  *size = 0;
  return 1;
}
int nvrtcGetCUBIN(void* program, char* cubin) {
  (void)program, (void)cubin;
  return 1;
}
