/* A stand-in libnvrtc that reports version 12.0, for the test that bandjit refuses an NVRTC
   too old for its kernels (runtime/nvrtc_api.cpp). Nothing else is ever called. */
int nvrtcVersion(int* major, int* minor) {
  *major = 12;
  *minor = 0;
  return 0;
}
