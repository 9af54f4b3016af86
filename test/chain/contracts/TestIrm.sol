// SPDX-License-Identifier: MIT
pragma solidity 0.8.19;

/// An interest rate model in Morpho Blue's IIrm layout for the local-chain tests: a fixed rate,
/// whose view (what a reader calls) can be made to revert while Morpho's own calls go on.
contract TestIrm {
    struct MarketParams {
        address loanToken;
        address collateralToken;
        address oracle;
        address irm;
        uint256 lltv;
    }

    struct Market {
        uint128 totalSupplyAssets;
        uint128 totalSupplyShares;
        uint128 totalBorrowAssets;
        uint128 totalBorrowShares;
        uint128 lastUpdate;
        uint128 fee;
    }

    /// About 3 % a year, per second, scaled by 1e18.
    uint256 public constant RATE = 1e9;
    bool public viewReverts;

    function setViewReverts(bool reverts) external {
        viewReverts = reverts;
    }

    function borrowRate(MarketParams memory, Market memory) external pure returns (uint256) {
        return RATE;
    }

    function borrowRateView(MarketParams memory, Market memory) external view returns (uint256) {
        require(!viewReverts, "view reverts");
        return RATE;
    }
}
