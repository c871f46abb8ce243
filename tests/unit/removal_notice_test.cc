// Which devices' removal the kernel announces to their users at once, by the driver of their
// parent: mlx5's and mlx4's (their PCI functions and mlx5's sub-functions), nothing else.
#include "core/removal_notice.h"

#include <gtest/gtest.h>

namespace rdma_eventd::daemon {
namespace {

TEST(RemovalNotice, OnlyTheDriversKnownToDisassociateTheirUsersAnnounceARemoval) {
  EXPECT_TRUE(removal_announced("mlx5_core"));
  EXPECT_TRUE(removal_announced("mlx5_core.sf"));
  EXPECT_TRUE(removal_announced("mlx4_core"));
  // No parent (rxe, siw), other drivers, and names that only begin like theirs.
  for (const char* driver : {"", "bnxt_en", "ice", "efa", "hns3", "mlx5", "mlx5_core_x",
                             "mlx5_coresf", "xmlx5_core", "mlx4_core."}) {
    EXPECT_FALSE(removal_announced(driver)) << driver;
  }
  EXPECT_EQ(unannounced_because(""),
            "it has no parent device: a software device such as rxe or siw");
  EXPECT_EQ(unannounced_because("bnxt_en"),
            "its parent's driver, bnxt_en, is not known to disassociate its users");
}

TEST(RemovalNotice, RenamesAreAnnouncedFromLinux613On) {
  for (const char* release : {"6.13.0", "6.13.0-1-amd64", "6.14.2", "7.0.0-rc1", "10.1"})
    EXPECT_TRUE(kernel_announces_renames(release)) << release;
  for (const char* release : {"6.12.57+deb13-amd64", "6.12", "6.1.0-28-amd64", "5.15.0", "", "6",
                              "6.", ".13", "six.13", "6.x13", "99999999.1"})
    EXPECT_FALSE(kernel_announces_renames(release)) << release;
}

}  // namespace
}  // namespace rdma_eventd::daemon
