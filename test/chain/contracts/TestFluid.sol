// SPDX-License-Identifier: MIT
pragma solidity 0.8.19;

/// Fluid's vault protocol as far as ingestion reads it, written for the local-chain tests: a
/// factory whose ERC-721 tokens are positions, T1 vaults (one collateral token, one debt token)
/// that keep each position's raw collateral and debt and emit Fluid's events, a vault resolver
/// answering `getAllVaultsAddresses`, `LIQUIDITY_RESOLVER` and `getVaultEntireData` in the
/// deployed resolver's struct layout, a liquidity resolver answering the two rates ingestion reads
/// of `getOverallTokenData`, and a positions resolver answering `getVaultPositionsForNftIds`.
/// Bookkeeping only: no token moves. Liquidations take one position's collateral and debt (Fluid
/// liquidates by tick; its event is the same).

contract TestFluidFactory {
    event Transfer(address indexed from, address indexed to, uint256 indexed id);

    uint256 public totalSupply;
    mapping(uint256 => address) public ownerOf;
    mapping(uint256 => address) public vaultOf;
    /// Each owner's ids, enumerable as ERC721Enumerable's are (tokenOfOwnerByIndex).
    mapping(address => uint256[]) private owned;
    mapping(uint256 => uint256) private ownedIndex;

    function mint(address to) external returns (uint256 id) {
        id = ++totalSupply;
        ownerOf[id] = to;
        vaultOf[id] = msg.sender;
        own(to, id);
        emit Transfer(address(0), to, id);
    }

    function transferFrom(address from, address to, uint256 id) external {
        require(ownerOf[id] == from && msg.sender == from, "not owner");
        ownerOf[id] = to;
        uint256[] storage ids = owned[from];
        uint256 at = ownedIndex[id];
        uint256 last = ids[ids.length - 1];
        ids[at] = last;
        ownedIndex[last] = at;
        ids.pop();
        own(to, id);
        emit Transfer(from, to, id);
    }

    function idsOf(address user) external view returns (uint256[] memory) {
        return owned[user];
    }

    function own(address to, uint256 id) private {
        ownedIndex[id] = owned[to].length;
        owned[to].push(id);
    }
}

contract TestFluidVault {
    event LogOperate(address user_, uint256 nftId_, int256 colAmt_, int256 debtAmt_, address to_);
    event LogLiquidate(address liquidator_, uint256 colAmt_, uint256 debtAmt_, address to_);
    event LogAbsorb(uint256 colAbsorbedRaw_, uint256 debtAbsorbedRaw_);

    TestFluidFactory public immutable factory;
    address public immutable supplyToken;
    address public immutable borrowToken;
    uint256 public immutable vaultId;
    /// Vault type: 10000 is T1; 20000 and up have a DEX on one side (smart collateral or debt).
    uint256 public immutable vaultType;
    address public oracle;
    /// Debt per collateral in raw units, 1e27 (Fluid's oracle precision).
    uint256 public oraclePrice;
    /// Percent, 1e2 (8500 = 85 %).
    uint16 public collateralFactor = 8000;
    uint16 public liquidationThreshold = 8500;
    uint16 public liquidationMaxLimit = 9000;
    /// Percent, 1e2 (100 = 1 %).
    uint16 public liquidationPenalty = 100;
    uint256 public supplyExchangePrice = 1e12;
    uint256 public borrowExchangePrice = 1e12;
    /// Percent, 1e2.
    int256 public supplyRate;
    int256 public borrowRate;
    uint256 public borrowable;
    mapping(uint256 => uint256) public colRaw;
    mapping(uint256 => uint256) public debtRaw;
    uint256 public totalColRaw;
    uint256 public totalDebtRaw;
    uint256 public positions;
    /// A vault whose reads fail (its oracle reverting, say): the resolver refuses it.
    bool public broken;
    /// A vault whose exchange prices cannot be computed: the positions resolver refuses its positions.
    bool public pricesRevert;

    constructor(
        TestFluidFactory factory_,
        address supplyToken_,
        address borrowToken_,
        uint256 vaultId_,
        uint256 vaultType_,
        address oracle_
    ) {
        factory = factory_;
        supplyToken = supplyToken_;
        borrowToken = borrowToken_;
        vaultId = vaultId_;
        vaultType = vaultType_;
        oracle = oracle_;
    }

    function setBroken(bool broken_) external {
        broken = broken_;
    }

    function setPricesRevert(bool pricesRevert_) external {
        pricesRevert = pricesRevert_;
    }

    function setPrice(uint256 price) external {
        oraclePrice = price;
    }

    function setConfig(uint16 cf, uint16 lt, uint16 lml, uint16 penalty) external {
        collateralFactor = cf;
        liquidationThreshold = lt;
        liquidationMaxLimit = lml;
        liquidationPenalty = penalty;
    }

    function setRates(int256 supply, int256 borrow, uint256 borrowable_) external {
        supplyRate = supply;
        borrowRate = borrow;
        borrowable = borrowable_;
    }

    /// Interest: the exchange prices grow (raw amounts stay; amounts grow with them).
    function setExchangePrices(uint256 supplyPrice, uint256 borrowPrice) external {
        supplyExchangePrice = supplyPrice;
        borrowExchangePrice = borrowPrice;
    }

    /// Fluid's operate: nftId 0 opens a position (an NFT minted to the sender); amounts in token units.
    function operate(uint256 nftId, int256 colAmt, int256 debtAmt, address to) external returns (uint256) {
        if (nftId == 0) {
            nftId = factory.mint(msg.sender);
            positions++;
        } else {
            require(factory.vaultOf(nftId) == address(this), "other vault");
            require(factory.ownerOf(nftId) == msg.sender, "not owner");
        }
        colRaw[nftId] = _apply(colRaw[nftId], colAmt, supplyExchangePrice);
        debtRaw[nftId] = _apply(debtRaw[nftId], debtAmt, borrowExchangePrice);
        totalColRaw = _apply(totalColRaw, colAmt, supplyExchangePrice);
        totalDebtRaw = _apply(totalDebtRaw, debtAmt, borrowExchangePrice);
        emit LogOperate(msg.sender, nftId, colAmt, debtAmt, to);
        return nftId;
    }

    /// A liquidation of one position's `col` collateral for `debt` debt (token units).
    function liquidate(uint256 nftId, uint256 col, uint256 debt, address to) external {
        uint256 c = (col * 1e12) / supplyExchangePrice;
        uint256 d = (debt * 1e12) / borrowExchangePrice;
        colRaw[nftId] -= c;
        debtRaw[nftId] -= d;
        totalColRaw -= c;
        totalDebtRaw -= d;
        emit LogLiquidate(msg.sender, col, debt, to);
    }

    /// Absorbs a position past the liquidation max limit: its collateral and debt leave it.
    function absorb(uint256 nftId) external {
        uint256 c = colRaw[nftId];
        uint256 d = debtRaw[nftId];
        colRaw[nftId] = 0;
        debtRaw[nftId] = 0;
        totalColRaw -= c;
        totalDebtRaw -= d;
        emit LogAbsorb(c, d);
    }

    function _apply(uint256 raw, int256 amount, uint256 exchangePrice) private pure returns (uint256) {
        if (amount >= 0) return raw + (uint256(amount) * 1e12) / exchangePrice;
        return raw - (uint256(-amount) * 1e12) / exchangePrice;
    }
}

contract TestFluidLiquidityResolver {
    mapping(address => uint256) public borrowRates;
    mapping(address => uint256) public supplyRates;

    function setRates(address token, uint256 borrowRate, uint256 supplyRate) external {
        borrowRates[token] = borrowRate;
        supplyRates[token] = supplyRate;
    }

    /// The first two fields of Fluid's OverallTokenData (a static struct: its fields in order).
    function getOverallTokenData(address token) external view returns (uint256 borrowRate, uint256 supplyRate) {
        return (borrowRates[token], supplyRates[token]);
    }
}

contract TestFluidVaultResolver {
    struct Tokens {
        address token0;
        address token1;
    }
    struct ConstantViews {
        address liquidity;
        address factory;
        address operateImplementation;
        address adminImplementation;
        address secondaryImplementation;
        address deployer;
        address supply;
        address borrow;
        Tokens supplyToken;
        Tokens borrowToken;
        uint256 vaultId;
        uint256 vaultType;
        bytes32 supplyExchangePriceSlot;
        bytes32 borrowExchangePriceSlot;
        bytes32 userSupplySlot;
        bytes32 userBorrowSlot;
    }
    struct Configs {
        uint16 supplyRateMagnifier;
        uint16 borrowRateMagnifier;
        uint16 collateralFactor;
        uint16 liquidationThreshold;
        uint16 liquidationMaxLimit;
        uint16 withdrawalGap;
        uint16 liquidationPenalty;
        uint16 borrowFee;
        address oracle;
        uint256 oraclePriceOperate;
        uint256 oraclePriceLiquidate;
        address rebalancer;
        uint256 lastUpdateTimestamp;
    }
    struct ExchangePricesAndRates {
        uint256 lastStoredLiquiditySupplyExchangePrice;
        uint256 lastStoredLiquidityBorrowExchangePrice;
        uint256 lastStoredVaultSupplyExchangePrice;
        uint256 lastStoredVaultBorrowExchangePrice;
        uint256 liquiditySupplyExchangePrice;
        uint256 liquidityBorrowExchangePrice;
        uint256 vaultSupplyExchangePrice;
        uint256 vaultBorrowExchangePrice;
        uint256 supplyRateLiquidity;
        uint256 borrowRateLiquidity;
        int256 supplyRateVault;
        int256 borrowRateVault;
        int256 rewardsOrFeeRateSupply;
        int256 rewardsOrFeeRateBorrow;
    }
    struct TotalSupplyAndBorrow {
        uint256 totalSupplyVault;
        uint256 totalBorrowVault;
        uint256 totalSupplyLiquidityOrDex;
        uint256 totalBorrowLiquidityOrDex;
        uint256 absorbedSupply;
        uint256 absorbedBorrow;
    }
    struct LimitsAndAvailability {
        uint256 withdrawLimit;
        uint256 withdrawableUntilLimit;
        uint256 withdrawable;
        uint256 borrowLimit;
        uint256 borrowableUntilLimit;
        uint256 borrowable;
        uint256 borrowLimitUtilization;
        uint256 minimumBorrowing;
    }
    struct CurrentBranchState {
        uint256 status;
        int256 minimaTick;
        uint256 debtFactor;
        uint256 partials;
        uint256 debtLiquidity;
        uint256 baseBranchId;
        int256 baseBranchMinima;
    }
    struct VaultState {
        uint256 totalPositions;
        int256 topTick;
        uint256 currentBranch;
        uint256 totalBranch;
        uint256 totalBorrow;
        uint256 totalSupply;
        CurrentBranchState currentBranchState;
    }
    struct UserSupplyData {
        bool modeWithInterest;
        uint256 supply;
        uint256 withdrawalLimit;
        uint256 lastUpdateTimestamp;
        uint256 expandPercent;
        uint256 expandDuration;
        uint256 baseWithdrawalLimit;
        uint256 withdrawableUntilLimit;
        uint256 withdrawable;
        uint256 decayEndTimestamp;
        uint256 decayAmount;
    }
    struct UserBorrowData {
        bool modeWithInterest;
        uint256 borrow;
        uint256 borrowLimit;
        uint256 lastUpdateTimestamp;
        uint256 expandPercent;
        uint256 expandDuration;
        uint256 baseBorrowLimit;
        uint256 maxBorrowLimit;
        uint256 borrowableUntilLimit;
        uint256 borrowable;
        uint256 borrowLimitUtilization;
    }
    struct VaultEntireData {
        address vault;
        bool isSmartCol;
        bool isSmartDebt;
        ConstantViews constantVariables;
        Configs configs;
        ExchangePricesAndRates exchangePricesAndRates;
        TotalSupplyAndBorrow totalSupplyAndBorrow;
        LimitsAndAvailability limitsAndAvailability;
        VaultState vaultState;
        UserSupplyData liquidityUserSupplyData;
        UserBorrowData liquidityUserBorrowData;
    }

    address public immutable LIQUIDITY_RESOLVER;
    address[] private vaults;

    constructor(address liquidityResolver) {
        LIQUIDITY_RESOLVER = liquidityResolver;
    }

    function addVault(address vault) external {
        vaults.push(vault);
    }

    function getAllVaultsAddresses() external view returns (address[] memory) {
        return vaults;
    }

    /// The positions of `user` (their ids), in every vault of the factory of the vaults listed: by
    /// the owner's own list, as the deployed resolver walks tokenOfOwnerByIndex.
    function positionsNftIdOfUser(address user) external view returns (uint256[] memory) {
        return TestFluidVault(vaults[0]).factory().idsOf(user);
    }

    function vaultByNftId(uint256 nftId) external view returns (address) {
        return TestFluidVault(vaults[0]).factory().vaultOf(nftId);
    }

    function getVaultEntireData(address vault) external view returns (VaultEntireData memory d) {
        TestFluidVault v = TestFluidVault(vault);
        require(!v.broken(), "oracle reverts");
        d.vault = vault;
        uint256 vaultType = v.vaultType();
        d.isSmartCol = vaultType == 20000 || vaultType == 40000;
        d.isSmartDebt = vaultType == 30000 || vaultType == 40000;
        d.constantVariables.factory = address(v.factory());
        d.constantVariables.supplyToken.token0 = v.supplyToken();
        d.constantVariables.borrowToken.token0 = v.borrowToken();
        d.constantVariables.vaultId = v.vaultId();
        d.constantVariables.vaultType = vaultType;
        d.configs.collateralFactor = v.collateralFactor();
        d.configs.liquidationThreshold = v.liquidationThreshold();
        d.configs.liquidationMaxLimit = v.liquidationMaxLimit();
        d.configs.liquidationPenalty = v.liquidationPenalty();
        d.configs.oracle = v.oracle();
        d.configs.oraclePriceOperate = v.oraclePrice();
        d.configs.oraclePriceLiquidate = v.oraclePrice();
        d.exchangePricesAndRates.vaultSupplyExchangePrice = v.supplyExchangePrice();
        d.exchangePricesAndRates.vaultBorrowExchangePrice = v.borrowExchangePrice();
        d.exchangePricesAndRates.supplyRateVault = v.supplyRate();
        d.exchangePricesAndRates.borrowRateVault = v.borrowRate();
        d.totalSupplyAndBorrow.totalSupplyVault = (v.totalColRaw() * v.supplyExchangePrice()) / 1e12;
        d.totalSupplyAndBorrow.totalBorrowVault = (v.totalDebtRaw() * v.borrowExchangePrice()) / 1e12;
        d.limitsAndAvailability.borrowable = v.borrowable();
        d.vaultState.totalPositions = v.positions();
    }
}

contract TestFluidPositionsResolver {
    error FluidVaultPositionsResolver__InvalidParams();

    struct UserPosition {
        uint256 nftId;
        address owner;
        uint256 supply;
        uint256 borrow;
    }

    TestFluidFactory public immutable FACTORY;

    constructor(TestFluidFactory factory) {
        FACTORY = factory;
    }

    /// Reverts when an id is not of `vault`, with Fluid's error.
    function getVaultPositionsForNftIds(uint256[] memory nftIds, address vault)
        external
        view
        returns (UserPosition[] memory positions)
    {
        TestFluidVault v = TestFluidVault(vault);
        require(!v.pricesRevert(), "exchange prices");
        positions = new UserPosition[](nftIds.length);
        for (uint256 i; i < nftIds.length; ++i) {
            if (FACTORY.vaultOf(nftIds[i]) != vault) revert FluidVaultPositionsResolver__InvalidParams();
            positions[i] = UserPosition({
                nftId: nftIds[i],
                owner: FACTORY.ownerOf(nftIds[i]),
                supply: (v.colRaw(nftIds[i]) * v.supplyExchangePrice()) / 1e12,
                borrow: (v.debtRaw(nftIds[i]) * v.borrowExchangePrice()) / 1e12
            });
        }
    }
}
