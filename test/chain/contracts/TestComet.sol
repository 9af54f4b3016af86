// SPDX-License-Identifier: MIT
pragma solidity 0.8.19;

interface IFeed {
    function latestRoundData() external view returns (uint80, int256, uint256, uint256, uint80);
}

interface IToken {
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
    function transfer(address to, uint256 amount) external returns (bool);
}

/// A Compound v3 market (Comet) for the local-chain tests, written for them: it answers the
/// Comet functions an indexer reads (getAssetInfo, getPrice, totalsBasic, userBasic,
/// collateralBalanceOf, borrowBalanceOf, isLiquidatable, the rate curve) with Comet's
/// arithmetic (principal × index / 1e15; indices accrued per second on the kinked curve; prices
/// of 8 decimals; factors of 1e18), and emits Comet's events. Base supply and borrow, collateral
/// in and out, and absorb; no rewards, no reserves sale, no pause.
contract TestComet {
    struct AssetInfo {
        uint8 offset;
        address asset;
        address priceFeed;
        uint64 scale;
        uint64 borrowCollateralFactor;
        uint64 liquidateCollateralFactor;
        uint64 liquidationFactor;
        uint128 supplyCap;
    }

    struct TotalsBasic {
        uint64 baseSupplyIndex;
        uint64 baseBorrowIndex;
        uint64 trackingSupplyIndex;
        uint64 trackingBorrowIndex;
        uint104 totalSupplyBase;
        uint104 totalBorrowBase;
        uint40 lastAccrualTime;
        uint8 pauseFlags;
    }

    struct UserBasic {
        int104 principal;
        uint64 baseTrackingIndex;
        uint64 baseTrackingAccrued;
        uint16 assetsIn;
        uint8 _reserved;
    }

    struct UserCollateral {
        uint128 balance;
        uint128 _reserved;
    }

    event Supply(address indexed from, address indexed dst, uint amount);
    event Transfer(address indexed from, address indexed to, uint amount);
    event Withdraw(address indexed src, address indexed to, uint amount);
    event SupplyCollateral(address indexed from, address indexed dst, address indexed asset, uint amount);
    event TransferCollateral(address indexed from, address indexed to, address indexed asset, uint amount);
    event WithdrawCollateral(address indexed src, address indexed to, address indexed asset, uint amount);
    event AbsorbDebt(address indexed absorber, address indexed borrower, uint basePaidOut, uint usdValue);
    event AbsorbCollateral(
        address indexed absorber,
        address indexed borrower,
        address indexed asset,
        uint collateralAbsorbed,
        uint usdValue
    );

    uint64 internal constant FACTOR_SCALE = 1e18;
    uint64 internal constant BASE_INDEX_SCALE = 1e15;

    address public immutable baseToken;
    address public immutable baseTokenPriceFeed;
    uint64 public immutable baseScale;
    uint8 public immutable decimals;
    uint public immutable supplyKink;
    uint public immutable supplyPerSecondInterestRateSlopeLow;
    uint public immutable supplyPerSecondInterestRateSlopeHigh;
    uint public immutable supplyPerSecondInterestRateBase;
    uint public immutable borrowKink;
    uint public immutable borrowPerSecondInterestRateSlopeLow;
    uint public immutable borrowPerSecondInterestRateSlopeHigh;
    uint public immutable borrowPerSecondInterestRateBase;

    /// Reward tracking as Comet's: per second, to all suppliers or borrowers, in trackingIndexScale units.
    uint64 public constant trackingIndexScale = 1e15;
    uint64 public baseTrackingSupplySpeed;
    uint64 public baseTrackingBorrowSpeed;
    uint public baseMinForRewards;

    AssetInfo[] internal assets;
    TotalsBasic internal totals;
    mapping(address => UserBasic) public userBasic;
    mapping(address => mapping(address => UserCollateral)) public userCollateral;

    /// rates: supply kink, slope low, slope high, base, then the same for borrow (per second, 1e18).
    constructor(address base, uint8 baseDecimals, address baseFeed, uint[8] memory rates) {
        baseToken = base;
        decimals = baseDecimals;
        baseScale = uint64(10 ** baseDecimals);
        baseTokenPriceFeed = baseFeed;
        supplyKink = rates[0];
        supplyPerSecondInterestRateSlopeLow = rates[1];
        supplyPerSecondInterestRateSlopeHigh = rates[2];
        supplyPerSecondInterestRateBase = rates[3];
        borrowKink = rates[4];
        borrowPerSecondInterestRateSlopeLow = rates[5];
        borrowPerSecondInterestRateSlopeHigh = rates[6];
        borrowPerSecondInterestRateBase = rates[7];
        totals.baseSupplyIndex = BASE_INDEX_SCALE;
        totals.baseBorrowIndex = BASE_INDEX_SCALE;
        totals.lastAccrualTime = uint40(block.timestamp);
    }

    function addAsset(
        address asset,
        address priceFeed,
        uint8 assetDecimals,
        uint64 borrowCF,
        uint64 liquidateCF,
        uint64 liquidationFactor
    ) external {
        assets.push(
            AssetInfo(uint8(assets.length), asset, priceFeed, uint64(10 ** assetDecimals), borrowCF, liquidateCF, liquidationFactor, 0)
        );
    }

    function setBaseTrackingSpeeds(uint64 supplySpeed, uint64 borrowSpeed, uint minForRewards) external {
        baseTrackingSupplySpeed = supplySpeed;
        baseTrackingBorrowSpeed = borrowSpeed;
        baseMinForRewards = minForRewards;
    }

    function numAssets() external view returns (uint8) {
        return uint8(assets.length);
    }

    function getAssetInfo(uint8 i) public view returns (AssetInfo memory) {
        return assets[i];
    }

    function totalsBasic() external view returns (TotalsBasic memory) {
        return totals;
    }

    function getPrice(address priceFeed) public view returns (uint) {
        (, int256 price, , , ) = IFeed(priceFeed).latestRoundData();
        require(price > 0, "bad price");
        return uint(price);
    }

    // Rates and accrual

    function getUtilization() public view returns (uint) {
        uint supplied = presentSupply(totals.baseSupplyIndex, totals.totalSupplyBase);
        uint borrowed = presentBorrow(totals.baseBorrowIndex, totals.totalBorrowBase);
        return supplied == 0 ? 0 : (borrowed * FACTOR_SCALE) / supplied;
    }

    function getSupplyRate(uint u) public view returns (uint64) {
        return curve(u, supplyKink, supplyPerSecondInterestRateBase, supplyPerSecondInterestRateSlopeLow, supplyPerSecondInterestRateSlopeHigh);
    }

    function getBorrowRate(uint u) public view returns (uint64) {
        return curve(u, borrowKink, borrowPerSecondInterestRateBase, borrowPerSecondInterestRateSlopeLow, borrowPerSecondInterestRateSlopeHigh);
    }

    function curve(uint u, uint kink, uint base, uint low, uint high) internal pure returns (uint64) {
        if (u <= kink) return uint64(base + (low * u) / FACTOR_SCALE);
        return uint64(base + (low * kink) / FACTOR_SCALE + (high * (u - kink)) / FACTOR_SCALE);
    }

    function accrued() internal view returns (uint64 supplyIndex, uint64 borrowIndex) {
        supplyIndex = totals.baseSupplyIndex;
        borrowIndex = totals.baseBorrowIndex;
        uint elapsed = block.timestamp - totals.lastAccrualTime;
        if (elapsed > 0) {
            uint u = getUtilization();
            supplyIndex += uint64((uint(supplyIndex) * getSupplyRate(u) * elapsed) / FACTOR_SCALE);
            borrowIndex += uint64((uint(borrowIndex) * getBorrowRate(u) * elapsed) / FACTOR_SCALE);
        }
    }

    function accrue() internal {
        (totals.baseSupplyIndex, totals.baseBorrowIndex) = accrued();
        totals.lastAccrualTime = uint40(block.timestamp);
    }

    function presentSupply(uint64 index, uint principal) internal pure returns (uint) {
        return (principal * index) / BASE_INDEX_SCALE;
    }

    function presentBorrow(uint64 index, uint principal) internal pure returns (uint) {
        return (principal * index) / BASE_INDEX_SCALE;
    }

    function presentValue(int104 principal) internal view returns (int256) {
        (uint64 s, uint64 b) = accrued();
        if (principal >= 0) return int256(presentSupply(s, uint104(principal)));
        return -int256(presentBorrow(b, uint104(-principal)));
    }

    function principalValue(int256 present) internal view returns (int104) {
        (uint64 s, uint64 b) = accrued();
        if (present >= 0) return int104(int256((uint256(present) * BASE_INDEX_SCALE) / s));
        return -int104(int256((uint256(-present) * BASE_INDEX_SCALE + b - 1) / b));
    }

    function setPrincipal(address account, int104 next) internal {
        int104 old = userBasic[account].principal;
        if (old >= 0) totals.totalSupplyBase -= uint104(old);
        else totals.totalBorrowBase -= uint104(-old);
        if (next >= 0) totals.totalSupplyBase += uint104(next);
        else totals.totalBorrowBase += uint104(-next);
        userBasic[account].principal = next;
    }

    // Balances

    function totalSupply() external view returns (uint256) {
        (uint64 s, ) = accrued();
        return presentSupply(s, totals.totalSupplyBase);
    }

    function totalBorrow() external view returns (uint256) {
        (, uint64 b) = accrued();
        return presentBorrow(b, totals.totalBorrowBase);
    }

    function balanceOf(address account) external view returns (uint256) {
        int256 v = presentValue(userBasic[account].principal);
        return v > 0 ? uint256(v) : 0;
    }

    function borrowBalanceOf(address account) public view returns (uint256) {
        int256 v = presentValue(userBasic[account].principal);
        return v < 0 ? uint256(-v) : 0;
    }

    function collateralBalanceOf(address account, address asset) external view returns (uint128) {
        return userCollateral[account][asset].balance;
    }

    /// The account's liquidity at the liquidation factors (negative: liquidatable), in price units.
    function liquidity(address account, bool forBorrow) internal view returns (int256 value) {
        value = -int256((borrowBalanceOf(account) * getPrice(baseTokenPriceFeed)) / baseScale);
        for (uint8 i = 0; i < assets.length; i++) {
            AssetInfo memory a = assets[i];
            uint balance = userCollateral[account][a.asset].balance;
            if (balance == 0) continue;
            uint v = (balance * getPrice(a.priceFeed)) / a.scale;
            uint64 factor = forBorrow ? a.borrowCollateralFactor : a.liquidateCollateralFactor;
            value += int256((v * factor) / FACTOR_SCALE);
        }
    }

    function isLiquidatable(address account) public view returns (bool) {
        return liquidity(account, false) < 0;
    }

    function isBorrowCollateralized(address account) public view returns (bool) {
        return liquidity(account, true) >= 0;
    }

    // Actions

    function supply(address asset, uint amount) external {
        supplyTo(msg.sender, asset, amount);
    }

    function supplyTo(address dst, address asset, uint amount) public {
        accrue();
        require(IToken(asset).transferFrom(msg.sender, address(this), amount), "transfer in");
        if (asset == baseToken) {
            moveBase(dst, int256(amount));
            emit Supply(msg.sender, dst, amount);
        } else {
            userCollateral[dst][asset].balance += uint128(amount);
            emit SupplyCollateral(msg.sender, dst, asset, amount);
        }
    }

    function withdraw(address asset, uint amount) external {
        accrue();
        if (asset == baseToken) {
            moveBase(msg.sender, -int256(amount));
            require(isBorrowCollateralized(msg.sender), "NotCollateralized");
            emit Withdraw(msg.sender, msg.sender, amount);
        } else {
            userCollateral[msg.sender][asset].balance -= uint128(amount);
            require(isBorrowCollateralized(msg.sender), "NotCollateralized");
            emit WithdrawCollateral(msg.sender, msg.sender, asset, amount);
        }
        require(IToken(asset).transfer(msg.sender, amount), "transfer out");
    }

    /// Comet's transferBase: the sender's balance down, the receiver's up; only the supply parts
    /// of the moves are Transfer events (a borrow or a repayment by transfer names no one).
    function transfer(address dst, uint amount) external returns (bool) {
        accrue();
        moveBase(msg.sender, -int256(amount));
        moveBase(dst, int256(amount));
        require(isBorrowCollateralized(msg.sender), "NotCollateralized");
        return true;
    }

    /// Moves an account's base balance by `delta`, emitting Comet's Transfer for the supply part.
    function moveBase(address account, int256 delta) internal {
        int256 old = presentValue(userBasic[account].principal);
        int256 next = old + delta;
        setPrincipal(account, principalValue(next));
        uint oldSupply = old > 0 ? uint256(old) : 0;
        uint nextSupply = next > 0 ? uint256(next) : 0;
        if (nextSupply > oldSupply) emit Transfer(address(0), account, nextSupply - oldSupply);
        if (oldSupply > nextSupply) emit Transfer(account, address(0), oldSupply - nextSupply);
    }

    function transferAsset(address dst, address asset, uint amount) external {
        accrue();
        userCollateral[msg.sender][asset].balance -= uint128(amount);
        userCollateral[dst][asset].balance += uint128(amount);
        require(isBorrowCollateralized(msg.sender), "NotCollateralized");
        emit TransferCollateral(msg.sender, dst, asset, amount);
    }

    /// Comet's absorb: every collateral seized at its liquidation factor, the debt cleared (what
    /// the collateral does not cover is the protocol's loss; a surplus is the account's supply).
    function absorb(address absorber, address[] calldata accounts) external {
        accrue();
        for (uint i = 0; i < accounts.length; i++) {
            address account = accounts[i];
            require(isLiquidatable(account), "NotLiquidatable");
            int256 oldBalance = presentValue(userBasic[account].principal);
            uint deltaValue = 0;
            for (uint8 j = 0; j < assets.length; j++) {
                AssetInfo memory a = assets[j];
                uint seized = userCollateral[account][a.asset].balance;
                if (seized == 0) continue;
                userCollateral[account][a.asset].balance = 0;
                uint value = (seized * getPrice(a.priceFeed)) / a.scale;
                deltaValue += (value * a.liquidationFactor) / FACTOR_SCALE;
                emit AbsorbCollateral(absorber, account, a.asset, seized, value);
            }
            uint basePrice = getPrice(baseTokenPriceFeed);
            int256 newBalance = oldBalance + int256((deltaValue * baseScale) / basePrice);
            if (newBalance < 0) newBalance = 0;
            int104 newPrincipal = principalValue(newBalance);
            setPrincipal(account, newPrincipal);
            uint paid = uint256(newBalance - oldBalance);
            emit AbsorbDebt(absorber, account, paid, (paid * basePrice) / baseScale);
            if (newPrincipal > 0) emit Transfer(address(0), account, presentValue(newPrincipal) > 0 ? uint256(presentValue(newPrincipal)) : 0);
        }
    }
}

/// CometRewards' configuration view, for the tests: per comet, the reward token and how its
/// 6-decimal tracking units are rescaled to the token's.
contract TestCometRewards {
    struct RewardConfig {
        address token;
        uint64 rescaleFactor;
        bool shouldUpscale;
    }

    mapping(address => RewardConfig) public rewardConfig;

    function setRewardConfig(address comet, address token, uint64 rescaleFactor, bool shouldUpscale) external {
        rewardConfig[comet] = RewardConfig(token, rescaleFactor, shouldUpscale);
    }
}
