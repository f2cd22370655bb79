// Catch2 v3 where installed (Ubuntu 24.04), else v2 (Debian 12).
#pragma once
#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#define BANDJIT_CATCH3 1
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif
