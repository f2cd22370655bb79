/* A stand-in libnvrtc that reports version 12.0, for the tests that bandjit passes over an
   NVRTC too old for its kernels (runtime/nvrtc_api.cpp). Only the version is ever read. */
int nvrtcVersion(int* major, int* minor) {
  *major = 12;
  *minor = 0;
  return 0;
}
