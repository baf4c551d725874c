"""Findings about re-queried facts (rides, hotels, sights) and their evidence, in Chinese and English."""

from __future__ import annotations

from agent_core.validator.wording import Phrase

# rides: why a ride could not be found (the evidence)
NOT_A_DATE = Phrase("ride.not_a_date", "{day} 不是有效日期", "{day} is not a date")
NO_NUMBER = Phrase("ride.no_number", "该{kind}没有车次或航班号，无法用工具核实", "the {kind} has no number, so no tool can confirm it")
NO_TRAIN = Phrase("ride.no_train", "{when} 的时刻表里没有 {number} 次列车", "there is no train {number} in the timetable on {when}")
WRONG_STRETCH = Phrase("ride.wrong_stretch", "{number} 在 {when} 的运行区间是 {route}，不能从 {origin} 到 {destination}",
                       "{number} on {when} runs {route}; it does not take you from {origin} to {destination}")
NO_FLIGHT = Phrase("ride.no_flight", "{when} 没有航班 {number}", "there is no flight {number} on {when}")
NOT_SEARCHED = Phrase("ride.not_searched", "没有找到{kind} {number}；{tool} 查到：{seen}", "no {kind} {number} found; {tool} found {seen}")
SEARCHED = Phrase("ride.searched", "{day} {origin}→{destination}：{numbers}", "{origin}→{destination} on {day}: {numbers}")
NOTHING = Phrase("ride.nothing", "无结果", "nothing")

# rides: what is wrong
RIDE_MISSING = Phrase("ride.missing", "{number} 按所写的信息查不到", "{number} cannot be found as stated")
RIDE_MISSING_EVIDENCE = Phrase("ride.missing.evidence", "{tool}：{reason}", "{tool}: {reason}")
RIDE_SAID = Phrase("ride.said", "{tool} {number}：{origin} {depart} → {destination} {arrive}",
                   "{tool} {number}: {origin} {depart} → {destination} {arrive}")
WRONG_STOPS = Phrase("ride.wrong_stops", "行程写的是 {origin}→{destination}，该{kind}停靠的是 {real_origin}→{real_destination}",
                     "the plan rides {origin}→{destination}, the {kind} calls at {real_origin}→{real_destination}")
WRONG_DEPART = Phrase("ride.wrong_depart", "出发时间 {stated} 与实际的 {actual} 不符", "departure {stated} does not match {actual}")
WRONG_ARRIVE = Phrase("ride.wrong_arrive", "到达时间 {stated} 与实际的 {actual} 不符", "arrival {stated} does not match {actual}")
ORIGIN_CITY = Phrase("ride.origin_city", "出发城市 {city} 不是 {place} 所在的城市", "origin city {city} is not where {place} is")
DESTINATION_CITY = Phrase("ride.destination_city", "到达城市 {city} 不是 {place} 所在的城市",
                          "destination city {city} is not where {place} is")
WRONG_AIRLINE = Phrase("ride.wrong_airline", "航空公司 {stated} 与实际的 {actual} 不符", "airline {stated} does not match {actual}")
NO_SUCH_SEAT = Phrase("ride.no_such_seat", "没有 {seat} 这种座位/舱位", "seat class {seat} is not offered")
FARES = Phrase("ride.fares", "{tool} 票价：{offer}", "{tool} fares: {offer}")
WRONG_FARE = Phrase("ride.wrong_fare", "{travellers} 人的价格 {price:g} 元不等于票价×人数",
                    "price {price:g} CNY for {travellers} is not the fare x travellers")
FARES_PER_PERSON = Phrase("ride.fares_per_person", "{tool} 每人票价：{offer}", "{tool} fares per person: {offer}")
FARE = Phrase("ride.fare", "{seat} {price:g}", "{seat} {price:g}")
WRONG_LOCAL_FARE = Phrase("ride.wrong_local_fare", "{kind}费用 {price:g} 元与估价相差太多",
                          "the {kind} cost of {price:g} CNY is far from the estimate")
LOCAL_FARE_SAID = Phrase("ride.local_fare", "route_plan {origin}→{destination}：{kind} {fare:g} 元{per}",
                         "route_plan {origin}→{destination}: {kind} {fare:g} CNY{per}")
PER_CAR = Phrase("ride.per_car", "（每车）", " a car")
PER_PERSON = Phrase("ride.per_person", "（每人）", " a person")

# hotels
NO_HOTEL = Phrase("hotel.missing", "这些日期查不到这个编号的酒店", "no hotel with this id exists for these dates")
NO_HOTEL_EVIDENCE = Phrase("hotel.missing.evidence", "hotel_search：查不到 {hotel_id}", "hotel_search: nothing found for {hotel_id}")
HOTEL_SAID = Phrase("hotel.said", "hotel_search {hotel_id}：{name}，城市 {city}，每晚 {price:g} 元",
                    "hotel_search {hotel_id}: {name}, city {city}, {price:g} CNY/night")
HOTEL_CITY = Phrase("hotel.city", "酒店不在{city}", "the hotel is not in {city}")
WRONG_NAME = Phrase("name.wrong", "名称 {stated} 与实际的 {actual} 不符", "the name {stated} does not match {actual}")
WRONG_RATE = Phrase("hotel.wrong_rate", "房价每晚 {price:g} 元与查询不符", "rate {price:g} CNY/night does not match")
NO_BREAKFAST = Phrase("hotel.no_breakfast", "行程说含早餐，但酒店不提供早餐", "breakfast is promised but the hotel has none")

# sights
NO_POI = Phrase("poi.missing", "查不到这个编号的地点", "no place with this id exists")
NO_POI_EVIDENCE = Phrase("poi.missing.evidence", "poi_search：查不到 {poi_id}", "poi_search: nothing found for {poi_id}")
POI_SAID = Phrase("poi.said", "poi_search {poi_id}：{name}，城市 {city}，门票 {price:g} 元，开放时间 {hours}",
                  "poi_search {poi_id}: {name}, city {city}, ticket {price:g} CNY, hours {hours}")
UNKNOWN_HOURS = Phrase("poi.unknown_hours", "未知", "?")
POI_CITY = Phrase("poi.city", "该地点不在{city}", "the place is not in {city}")
WRONG_TICKET = Phrase("poi.wrong_ticket", "门票 {price:g} 元与查询不符", "ticket {price:g} CNY does not match")
CLOSED_ON = Phrase("poi.closed_on", "{weekday}不开放（开放时间 {hours}）", "it is closed on {weekday}s (hours {hours})")
OUTSIDE_HOURS = Phrase("poi.outside_hours", "游览 {start}–{end} 不在开放时间 {hours} 之内",
                       "the visit {start}–{end} is not inside the opening hours {hours}")
