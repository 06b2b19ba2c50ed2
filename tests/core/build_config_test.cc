// The build promises assertions in every build type (Release with assertions by default).
#include <gtest/gtest.h>

TEST(BuildConfig, AssertionsStayOnInEveryBuildType) {
#ifdef NDEBUG
  FAIL() << "NDEBUG is defined: this build type would compile assert() away";
#endif
}
